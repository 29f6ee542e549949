"""PadsPerAxis: pads of more axes than the device's last two as one pad per axis, same numbers."""

import numpy as np
import torch
import tvm
from tvm import relax

import tvm_buda
from relay_passes.pads_per_axis import PadsPerAxis
from tests.helpers import assert_matches_golden
from tests.relay_passes.ir import run_llvm

WIDTHS = (0, 1, 2, 1, 1, 0, 0, 2, 1, 1)  # every axis padded: N, C, D, H, W


def _pad_module(mode: str, value: float = 0.0):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 3, 4, 5, 6), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.nn.pad(x, WIDTHS, pad_mode=mode, pad_value=value))
        bb.emit_func_output(out)
    return bb.get()


def _pads(mod) -> list:
    found = []
    relax.analysis.post_order_visit(mod["main"], lambda e: isinstance(e, relax.Call) and e.op.name == "relax.nn.pad"
                                    and found.append([int(v) for v in e.attrs.pad_width]))
    return found


def test_each_mode_pads_axis_by_axis_with_the_same_result():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    for mode, value in (("constant", 0.5), ("reflect", 0.0), ("replicate", 0.0)):
        before = _pad_module(mode, value)
        after = PadsPerAxis()(before)
        pads = _pads(after)
        assert len(pads) == 4, pads  # H and W at once, then N, C and D one each
        assert all(sum(1 for i in range(len(p) // 2) if p[2 * i] or p[2 * i + 1]) <= 2 for p in pads)
        np.testing.assert_array_equal(run_llvm(after, x), run_llvm(before, x))


def test_a_pad_of_the_last_two_dims_is_left_alone():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 2, 4, 4), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.nn.pad(x, (0, 0, 0, 0, 1, 1, 2, 0)))
        bb.emit_func_output(out)
    mod = bb.get()
    tvm.ir.assert_structural_equal(PadsPerAxis()(mod), mod)


def test_constant_pad_3d_runs_on_the_device():
    model = torch.nn.ConstantPad3d((1, 2, 0, 1, 2, 1), 0.5).eval()
    x = torch.randn(1, 2, 3, 4, 4)
    compiled = tvm_buda.compile_model(model, (x,))
    assert compiled.cpu_ops() == [], compiled.cpu_ops()
    assert_matches_golden(compiled.run(x), model(x))
