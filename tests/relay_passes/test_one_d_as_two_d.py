"""ConvPool1DAs2D: conv1d / max_pool1d / avg_pool1d as 2-D ops over a height of 1, same numbers."""

import numpy as np
import torch
from tvm import relax

import tvm_buda
from relay_passes.one_d_as_two_d import ConvPool1DAs2D
from tests.helpers import assert_matches_golden
from tests.relay_passes.ir import op_names, run_llvm


def _one_d_module():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 4, 17), "float32"))
    w = relax.Var("w", relax.TensorType((6, 2, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            c = bb.emit(relax.op.nn.conv1d(x, w, strides=2, padding=(1, 2), dilation=2, groups=2))
            p = bb.emit(relax.op.nn.max_pool1d(c, 3, strides=2, padding=(1, 1)))
            q = bb.emit(relax.op.nn.avg_pool1d(c, 2, strides=1, padding=(1, 0), count_include_pad=False))
            out = bb.emit_output(relax.Tuple([p, q]))
        bb.emit_func_output(out)
    return bb.get()


def test_one_d_ops_become_two_d_with_the_same_result():
    before = _one_d_module()
    after = ConvPool1DAs2D()(before)
    assert {"relax.nn.conv2d", "relax.nn.max_pool2d", "relax.nn.avg_pool2d"} <= set(op_names(after))
    assert not {"relax.nn.conv1d", "relax.nn.max_pool1d", "relax.nn.avg_pool1d"} & set(op_names(after))
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 4, 17)).astype(np.float32), rng.standard_normal((6, 2, 3)).astype(np.float32)
    for got, want in zip(run_llvm(after, x, w), run_llvm(before, x, w)):
        np.testing.assert_array_equal(got, want)


def test_conv1d_transpose_becomes_conv2d_transpose_with_the_same_result():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 4, 9), "float32"))
    w = relax.Var("w", relax.TensorType((4, 3, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.nn.conv1d_transpose(x, w, strides=2, padding=(1, 2), output_padding=1,
                                                              dilation=1, groups=2))
        bb.emit_func_output(out)
    before = bb.get()
    after = ConvPool1DAs2D()(before)
    assert "relax.nn.conv2d_transpose" in op_names(after) and "relax.nn.conv1d_transpose" not in op_names(after)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 4, 9)).astype(np.float32), rng.standard_normal((4, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(run_llvm(after, x, w), run_llvm(before, x, w), rtol=1e-5, atol=1e-5)


def test_conv1d_and_pool1d_run_on_the_device():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv1d(4, 8, 3, padding=1), torch.nn.MaxPool1d(2)).eval()
    x = torch.randn(2, 4, 16)
    compiled = tvm_buda.compile_model(model, (x,))
    assert {"nn.conv2d", "nn.max_pool2d"} <= set(compiled.device_ops()), compiled.device_ops()
    assert not any("conv1d" in op or "pool1d" in op for op in compiled.cpu_ops()), compiled.cpu_ops()
    assert_matches_golden(compiled.run(x), model(x))
