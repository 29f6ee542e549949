"""ThreeDAs2D: conv3d, max/avg_pool3d and adaptive_avg_pool3d as 2-D device ops, same numbers."""

import numpy as np
import torch
from tvm import relax

import tvm_buda
from relay_passes.three_d_as_two_d import ThreeDAs2D
from tests.helpers import assert_matches_golden
from tests.relay_passes.ir import op_names, run_llvm

THREE_D = {"relax.nn.conv3d", "relax.nn.max_pool3d", "relax.nn.avg_pool3d", "relax.nn.adaptive_avg_pool3d"}


def _three_d_module():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 4, 7, 9, 8), "float32"))
    w = relax.Var("w", relax.TensorType((6, 2, 3, 2, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            c = bb.emit(relax.op.nn.conv3d(x, w, strides=(2, 1, 2), padding=(1, 0, 2, 2, 1, 0), dilation=(2, 1, 1),
                                           groups=2))
            p = bb.emit(relax.op.nn.max_pool3d(x, (3, 2, 3), strides=(2, 2, 1), padding=(1, 0, 1, 1, 1, 0),
                                               dilation=(1, 2, 1), ceil_mode=True))
            q = bb.emit(relax.op.nn.avg_pool3d(x, (2, 3, 3), strides=(2, 2, 2), padding=(1, 1, 1, 1, 1, 1),
                                               ceil_mode=True, count_include_pad=False))
            r = bb.emit(relax.op.nn.avg_pool3d(x, 3, strides=2, padding=1, count_include_pad=True))
            g = bb.emit(relax.op.nn.adaptive_avg_pool3d(x, (7, 3, 2)))
            m = bb.emit(relax.op.nn.adaptive_avg_pool3d(x, 1))
            out = bb.emit_output(relax.Tuple([c, p, q, r, g, m]))
        bb.emit_func_output(out)
    return bb.get()


def test_three_d_ops_become_two_d_with_the_same_result():
    before = _three_d_module()
    after = ThreeDAs2D()(before)
    assert not THREE_D & set(op_names(after)), set(op_names(after))
    assert {"relax.nn.conv2d", "relax.nn.max_pool2d", "relax.nn.avg_pool2d"} <= set(op_names(after))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7, 9, 8)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 2, 3)).astype(np.float32)
    for got, want in zip(run_llvm(after, x, w), run_llvm(before, x, w)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv3d_and_pools_3d_run_on_the_device():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv3d(3, 4, 3, padding=1, stride=(2, 1, 1)), torch.nn.ReLU(),
                                torch.nn.MaxPool3d(2), torch.nn.AvgPool3d(2, padding=1),
                                torch.nn.AdaptiveAvgPool3d(1)).eval()
    x = torch.randn(1, 3, 8, 8, 8)
    compiled = tvm_buda.compile_model(model, (x,))
    assert compiled.cpu_ops() == [], compiled.cpu_ops()
    assert {"nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d"} <= set(compiled.device_ops()), compiled.device_ops()
    assert_matches_golden(compiled.run(x), model(x))
