"""The non-finite check on compiled models (device_runtime.py runs it after every device program):
a device-made inf/NaN is an error naming the generated op, the setting turns it off, and the check
would have named the op behind issue 28's NaN logits had formats not saturated."""

import numpy as np
import pytest
import torch

import tvm_buda
from buda_runtime_sim import DataFormat, formats
from buda_runtime_sim.op import dispatch
from buda_runtime_sim.finite_check import NonFiniteResultError


class ScaledReciprocal(torch.nn.Module):
    def forward(self, x):
        return torch.reciprocal(x * 2.0)


def _tiny_input():
    x = torch.ones(1, 32, 32)
    x[0, 3, :5] = 1e-9           # 0 once stored in Float16, so the device divides by 0; float32 gives 5e8
    return x


def test_device_made_inf_names_the_generated_op_and_can_be_turned_off(monkeypatch):
    config = tvm_buda.CompilerConfig()
    config.default_df_override = DataFormat.Float16
    x = _tiny_input()
    compiled = tvm_buda.compile_model(ScaledReciprocal(), (x,), config=config)
    assert torch.isfinite(ScaledReciprocal()(x)).all()
    with pytest.raises(NonFiniteResultError, match=r"device program 'scaledreciprocal_0': op '\w+' \((Reciprocal|Divide)"):
        compiled.run(x)
    monkeypatch.setenv("PYBUDA_CHECK_FINITE", "0")
    out = compiled.run(x)
    assert torch.isinf(out[0, 3, :5]).all() and torch.isfinite(out[0, 4]).all()
    monkeypatch.setenv("PYBUDA_CHECK_FINITE", "warn")
    with pytest.warns(RuntimeWarning, match="float32 gives finite values there"):
        compiled.run(x)


class MaskedScores(torch.nn.Module):
    """Attention scores plus (1 - mask) * finfo(float32).min, then softmax (PyBuda's ViLT demo)."""

    def forward(self, scores, mask):
        return torch.softmax(scores + (1.0 - mask[:, None, :]) * torch.finfo(torch.float32).min, dim=-1)


def test_the_check_names_the_op_of_issue_28_without_saturation(monkeypatch):
    """With the formats' saturation taken away (as before the fix), finfo.min is -inf in Float16_b
    and 0 * -inf is NaN: the check names the multiply and the operand its format broke."""
    scores, mask = torch.randn(1, 8, 8), torch.tensor([[1.0, 1, 1, 1, 1, 1, 0, 0]])
    compiled = tvm_buda.compile_model(MaskedScores(), (scores, mask))
    np.testing.assert_allclose(compiled.run(scores, mask).numpy(), MaskedScores()(scores, mask).numpy(), atol=0.02)
    monkeypatch.setattr(formats, "_saturate", lambda rounded, source, limit: rounded)
    monkeypatch.setattr(dispatch, "_SCALARS", {})        # scalar operands converted again, unsaturated
    with pytest.raises(NonFiniteResultError, match=r"op '\w+' \(Multiply.*operand 1 is finite as given but not "
                                                   r"in Float16_b.*float32 gives finite values"):
        compiled.run(scores, mask)
