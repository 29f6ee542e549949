"""Kernels' shortcuts for the default numerics (HiFi3, Float16_b) give the bits of the general code
they skip: the Multiply kernel's direct fidelity_bf16 call, Softmax on storage without padded
columns, Layernorm's in-place tail and unary ops without the f(0) probe."""

import ml_dtypes
import numpy as np
import pytest
import torch

from buda_runtime_sim import fidelity_bf16
from buda_runtime_sim.compact_tensor import compact_or_padded
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.float_errors import ignored
from buda_runtime_sim.kernels import KERNELS, nn_grad
from buda_runtime_sim.numerics_config import OpNumerics
from buda_runtime_sim.tensor import Tensor

BF16 = DataFormat.Float16_b
NUMERICS = OpNumerics()
# references run outside float_errors.ignored(): overflow and inf - inf are values here, not errors
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
SPECIALS = np.array([np.inf, -np.inf, np.nan, -0.0, 3.3895e38], np.float32)


def _bf16(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def _tensor(shape, seed, specials=False, compact=False):
    rng = np.random.default_rng(seed)
    x = _bf16(rng.standard_normal(shape) * 3)
    if specials and x.size:
        x.reshape(-1)[: min(x.size, 5)] = SPECIALS[: min(x.size, 5)]
    return compact_or_padded(x, BF16) if compact else Tensor.from_array(x, BF16)


def _bits(t: Tensor):
    return t.shape, t.data_format, t.padded.view(np.uint32).copy()


def _same(got: Tensor, want: Tensor):
    assert got.shape == want.shape and got.data_format == want.data_format
    np.testing.assert_array_equal(got.padded.view(np.uint32), want.padded.view(np.uint32))


@pytest.mark.parametrize("shape_a, shape_b", [((4, 32, 64), (4, 32, 64)), ((4, 2, 32, 32), ()), ((4, 64), (4, 64)),
                                              ((3, 40), (40,)), ((), (4, 32, 64)), ((4, 30, 50), (4, 30, 50))])
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("compact", [False, True])
def test_multiply_kernel_fast_path_is_the_general_path(monkeypatch, shape_a, shape_b, specials, compact):
    a, b = _tensor(shape_a, 1, specials, compact), _tensor(shape_b, 2)
    calls = []
    real = fidelity_bf16.multiply
    monkeypatch.setattr(fidelity_bf16, "multiply", lambda x, y: calls.append(1) or real(x, y))
    with ignored():
        fast = KERNELS["Multiply"]([a, b], {}, NUMERICS)
        assert calls                                                   # the fast path was tried
        monkeypatch.setattr(fidelity_bf16, "multiply", lambda x, y: None)
        general = KERNELS["Multiply"]([a, b], {}, NUMERICS)
    _same(fast, general)


def _reference_softmax(x, dim):
    """The kernel's formula before its buffers were reused."""
    x = x - np.max(x, axis=dim, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=dim, keepdims=True)


@pytest.mark.parametrize("shape", [(4, 2, 32, 32), (4, 32, 64), (2, 30, 50), (64,)])
def test_softmax_bits(shape):
    a = _tensor(shape, 3, specials=True)
    before = a.padded.copy()
    with ignored():
        got = KERNELS["Softmax"]([a], {"dim": -1}, NUMERICS)
        want = _reference_softmax(a.logical().reshape(a.shape), -1)
    np.testing.assert_array_equal(a.padded, before)                    # the input's storage is not written
    _same(got, Tensor.from_array(want, BF16))


def _reference_layernorm(x, gamma, beta, eps):
    """The kernel's padded-storage formula, in float32, with fresh arrays at each step."""
    cols = x.shape[-1]
    mean = x.sum(axis=-1, keepdims=True) / cols
    centred = x - mean
    var = np.einsum("...i,...i->...", centred, centred)[..., None] / cols
    return centred / np.sqrt(var + eps) * gamma + beta


@pytest.mark.parametrize("shape", [(4, 32, 64), (2, 32, 96)])
def test_layernorm_bits(shape):
    a, gamma, beta = _tensor(shape, 4, specials=True), _tensor(shape[-1:], 5), _tensor(shape[-1:], 6)
    with ignored():
        got = KERNELS["Layernorm"]([a, gamma, beta], {"dim": -1, "epsilon": 1e-12}, NUMERICS)
        want = _reference_layernorm(a.logical(), gamma.logical(), beta.logical(), 1e-12)
    _same(got, Tensor.from_array(want.astype(np.float32), BF16))


@pytest.mark.parametrize("shape", [(4, 32, 256), (3, 40), (5,)])
@pytest.mark.parametrize("op, reference", [("Gelu", lambda t: torch.nn.functional.gelu(t)), ("Exp", lambda t: torch.from_numpy(np.exp(t.numpy()))),
                                           ("Sigmoid", torch.sigmoid)])
def test_unary_bits_and_zero_padding(shape, op, reference):
    """exp and sigmoid map 0 to non-zero: with padding present it must stay zero; without, no probe."""
    a = _tensor(shape, 7, specials=True)
    got = KERNELS[op]([a], {}, NUMERICS)
    want = reference(torch.from_numpy(a.logical().copy())).numpy()
    _same(got, Tensor.from_array(want, BF16))


@pytest.mark.parametrize("shape, dim", [((4, 2, 32, 32), -1), ((3, 5, 7), 1), ((6,), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_bw_values_is_the_plain_formula(shape, dim, dtype):
    rng = np.random.default_rng(8)
    y, g = rng.random(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    want = y * (g - np.sum(g * y, axis=dim, keepdims=True))
    got = nn_grad.softmax_bw_values(y, g, dim)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_gelu_derivative_values_with_a_kept_ones_tensor():
    """The kept unit gradient is reused for a shape only: every call is torch's own gelu_backward."""
    rng = np.random.default_rng(9)
    for shape in [(4, 32, 256), (4, 32, 256), (3, 7), (4, 32, 256)]:
        x = rng.standard_normal(shape).astype(np.float32) * 4
        t = torch.from_numpy(x)
        for approximate in ("none", "tanh"):
            want = torch.ops.aten.gelu_backward(torch.ones_like(t), t, approximate=approximate).numpy()
            np.testing.assert_array_equal(nn_grad.gelu_derivative_values(x, approximate).view(np.uint32),
                                          want.view(np.uint32))


@pytest.mark.parametrize("shapes, argument", [(((3, 4), (5,), (3, 4)), "operandA"), (((3, 4), (4,), (2, 4)), "operandB")])
def test_where_names_the_operand_that_does_not_broadcast(shapes, argument):
    from buda_runtime_sim.kernels.common import OpArgumentError

    inputs = [_tensor(shape, k) for k, shape in enumerate(shapes)]
    with pytest.raises(OpArgumentError) as caught:
        KERNELS["Where"](inputs, {}, NUMERICS)
    assert caught.value.argument == argument


def test_where_broadcasts_a_scalar_and_a_column():
    condition, a, b = _tensor((4, 2, 32, 1), 1, compact=True), _tensor((), 2), _tensor((4, 2, 32, 32), 3)
    want = np.where(condition.logical() != 0, a.logical(), b.logical())
    _same(KERNELS["Where"]([condition, a, b], {}, NUMERICS), Tensor.from_array(want, BF16))


@pytest.mark.parametrize("shape", [(4, 32, 64), (128, 256), (3, 5, 7), (2, 33, 96)])
def test_layer_norm_statistics_do_not_depend_on_the_weight(shape):
    """nn_grad.layernorm_gradients passes the weight to native_layer_norm only for speed."""
    rng = np.random.default_rng(10)
    for scale in (1e-20, 1.0, 1e20):
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        x.reshape(-1)[:3] = [np.inf, np.nan, -0.0]
        t, n = torch.from_numpy(x), shape[-1]
        plain = torch.ops.aten.native_layer_norm(t, [n], None, None, 1e-12)[1:]
        weighted = torch.ops.aten.native_layer_norm(t, [n], torch.randn(n) * 100, None, 1e-12)[1:]
        for p, w in zip(plain, weighted):
            np.testing.assert_array_equal(p.numpy().view(np.uint32), w.numpy().view(np.uint32))


@pytest.mark.parametrize("output_df", [DataFormat.Float16_b, DataFormat.Float32, DataFormat.Bfp8_b])
@pytest.mark.parametrize("compact", [False, True])
def test_where_and_comparisons_skip_only_rounding_that_changes_nothing(output_df, compact):
    """Where's values are its operands' (held in their shared format) and comparisons' are 0 and 1:
    the results equal the rounded ones, specials included; a block-float output is still rounded."""
    from buda_runtime_sim.kernels.common import result

    numerics = OpNumerics(output_df=output_df)
    condition = _tensor((4, 2, 32, 1) if compact else (4, 2, 32, 32), 1, compact=compact)
    a, b = _tensor((4, 2, 32, 32), 2, specials=True), _tensor((), 3)
    with ignored():
        got = KERNELS["Where"]([condition, a, b], {}, numerics)
        _same(got, result(np.where(condition.logical() != 0, a.logical(), b.logical()), numerics))
        for op, fn in (("NotEqual", np.not_equal), ("Less", np.less), ("Equal", np.equal)):
            got = KERNELS[op]([condition, a], {}, numerics)
            _same(got, result(fn(condition.logical(), a.logical()).astype(np.float32), numerics))
