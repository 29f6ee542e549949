"""The backward kernels (LayernormBw, SoftmaxBw, GeluDerivative) vs torch.autograd: tight at
Float32, and at the default format exactly their float32 result rounded once to Float16_b."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.formats import quantize
from buda_runtime_sim.kernels import OpArgumentError
from buda_runtime_sim.kernels.nn_grad import layernorm_bw_values
from buda_runtime_sim.numerics_config import NumericsConfig

RNG = np.random.default_rng(7)
FLOAT32 = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                         math_fidelity=MathFidelity.HiFi4)


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _bf16(x):
    return quantize(np.asarray(x, np.float32), DataFormat.Float16_b)


def _close(out, want, rtol=2e-5):
    out = out.numpy() if hasattr(out, "numpy") else out
    assert out.shape == want.shape
    assert np.abs(out - want).max() <= rtol * max(np.abs(want).max(), 1e-6), np.abs(out - want).max()


def _layernorm_grads(x, w, b, g, dim, eps):
    """torch.autograd's (dx, dgamma, dbeta) of a layer norm along `dim`."""
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    moved = tx.movedim(dim, -1)
    out = F.layer_norm(moved, (x.shape[dim],), tw, tb, eps).movedim(-1, dim)
    out.backward(torch.tensor(g))
    return tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy()


@pytest.mark.parametrize("shape, dim", [((4, 32, 64), -1), ((3, 5, 40), -1), ((2, 6, 33), 1)])
def test_layernorm_bw_matches_autograd(shape, dim):
    x, g = _data(*shape), _data(*shape)
    w, b = _data(shape[dim]), _data(shape[dim])
    want = _layernorm_grads(x, w, b, g, dim, 1e-5)
    with context.use(context.ExecutionContext(numerics=FLOAT32)):
        for operand in (0, 1, 2):
            _close(pybuda.op.nn.LayernormBw("lnb", g, x, w, dim=dim, epsilon=1e-5, operand=operand), want[operand])


def test_layernorm_bw_rounds_once_to_the_output_format():
    """Default formats: operands enter as Float16_b, the float32 gradient is rounded once."""
    x, g, w = _data(4, 32, 64), _data(4, 32, 64), _data(64)
    xb, gb, wb = _bf16(x), _bf16(g), _bf16(w)
    want = _layernorm_grads(xb, wb, np.zeros(64, np.float32), gb, -1, 1e-12)
    for operand in (0, 1, 2):
        out = pybuda.op.nn.LayernormBw("lnb", g, x, w, dim=-1, epsilon=1e-12, operand=operand)
        assert out.data_format == DataFormat.Float16_b
        exact = _bf16(layernorm_bw_values(gb, xb, wb, -1, 1e-12, operand))
        np.testing.assert_array_equal(out.numpy(), exact)   # bit for bit
        _close(out, want[operand], rtol=8e-3)               # within a bfloat16 step of autograd


def test_softmax_bw_matches_autograd():
    for shape, dim in (((4, 2, 32, 32), -1), ((3, 7, 40), 1)):
        x, g = _data(*shape), _data(*shape)
        tx = torch.tensor(x, requires_grad=True)
        y = torch.softmax(tx, dim)
        y.backward(torch.tensor(g))
        with context.use(context.ExecutionContext(numerics=FLOAT32)):
            _close(pybuda.op.nn.SoftmaxBw("smb", y.detach().numpy(), g, dim=dim), tx.grad.numpy())


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_derivative_matches_autograd(approximate):
    x = _data(4, 32, 256) * 3
    tx = torch.tensor(x, requires_grad=True)
    F.gelu(tx, approximate=approximate).sum().backward()
    with context.use(context.ExecutionContext(numerics=FLOAT32)):
        _close(pybuda.op.GeluDerivative("gd", x, approximate=approximate), tx.grad.numpy(), rtol=1e-6)
    out = pybuda.op.GeluDerivative("gd", x, approximate=approximate).numpy()   # default formats
    np.testing.assert_array_equal(out, _bf16(out))


def test_padding_stays_zero():
    """An odd shape: the padded storage of every result is zero outside the values."""
    x, g = _data(3, 5, 40), _data(3, 5, 40)
    out = pybuda.op.nn.LayernormBw("lnb", g, x, np.ones(40, np.float32))
    assert not out.padded[..., 5:, :].any() and not out.padded[..., 40:].any()
    out = pybuda.op.nn.SoftmaxBw("smb", np.abs(x), g, dim=-1)
    assert not out.padded[..., 5:, :].any() and not out.padded[..., 40:].any()


X = np.ones((2, 8, 16), np.float32)


@pytest.mark.parametrize("call, prefix", [
    (lambda: pybuda.op.nn.LayernormBw("lb", X, X, np.ones(8)), "LayernormBw 'lb': weights"),
    (lambda: pybuda.op.nn.LayernormBw("lb", X[:1], X, np.ones(16)), "LayernormBw 'lb': grad"),
    (lambda: pybuda.op.nn.LayernormBw("lb", X, X, np.ones(16), operand=3), "LayernormBw 'lb': operand"),
    (lambda: pybuda.op.nn.LayernormBw("lb", X, X, np.ones(16), epsilon=-1.0), "LayernormBw 'lb': epsilon"),
    (lambda: pybuda.op.nn.LayernormBw("lb", X, X, np.ones(16), dim=3), "LayernormBw 'lb': dim"),
    (lambda: pybuda.op.nn.SoftmaxBw("sb", X, X[:1], dim=-1), "SoftmaxBw 'sb': grad"),
    (lambda: pybuda.op.nn.SoftmaxBw("sb", X, X, dim=1.5), "SoftmaxBw 'sb': dim"),
    (lambda: pybuda.op.GeluDerivative("gd", X, approximate="fast"), "GeluDerivative 'gd': approximate"),
])
def test_misuse_names_op_and_argument(call, prefix):
    with pytest.raises(OpArgumentError, match="^" + prefix):
        call()


def test_input_and_weight_gradients_share_one_computation_only_for_the_same_tensors():
    """The first of a dx/dgamma pair keeps the other gradient for a later call on the same tensors
    (nn_grad._kept): the kept values are a fresh call's bits, other tensors never see them, calls
    on other tensors in between do not drop them, and at most KEPT_PAIRS entries are kept."""
    from buda_runtime_sim.kernels import nn_grad
    from buda_runtime_sim.tensor import Tensor

    nn_grad._kept.entries = []
    g, x, w = (Tensor.from_array(_data(*s), DataFormat.Float16_b) for s in ((4, 32, 64), (4, 32, 64), (64,)))
    fresh = {op: layernorm_bw_values(g.numpy(), x.numpy(), w.numpy(), -1, 1e-12, op) for op in (0, 1)}

    def call(op, tensors=(g, x, w)):
        return pybuda.op.nn.LayernormBw(f"ln_bw_{op}", *tensors, dim=-1, epsilon=1e-12, operand=op)

    for first, second in ((0, 1), (1, 0)):
        assert np.array_equal(call(first).numpy(), _bf16(fresh[first]))
        assert len(nn_grad._kept.entries) == 1
        assert np.array_equal(call(second).numpy(), _bf16(fresh[second]))   # taken from the kept entry
        assert nn_grad._kept.entries == []
    call(0)
    other_x = Tensor.from_array(_data(4, 32, 64), DataFormat.Float16_b)      # not the kept pair's tensors
    want = layernorm_bw_values(g.numpy(), other_x.numpy(), w.numpy(), -1, 1e-12, 1)
    assert np.array_equal(call(1, (g, other_x, w)).numpy(), _bf16(want))
    assert len(nn_grad._kept.entries) == 2                 # the other pair's dx kept, the first dgamma not dropped
    entries = list(nn_grad._kept.entries)
    assert np.array_equal(call(1).numpy(), _bf16(fresh[1]))                 # taken out after the other call
    assert nn_grad._kept.entries == entries[1:]
    for _ in range(nn_grad.KEPT_PAIRS + 2):
        call(0, (g, Tensor.from_array(_data(4, 32, 64), DataFormat.Float16_b), w))
    assert len(nn_grad._kept.entries) == nn_grad.KEPT_PAIRS
    nn_grad._kept.entries = []
