"""The format facts the fast paths rely on to skip work: which masks and re-quantisations are the
identity on values already held in a format (formats.mantissa_bits, formats.holds_exactly)."""

import numpy as np
import pytest

from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.formats import BFP_FORMATS, MANTISSA_BITS, holds_exactly, mantissa_bits, quantize

FLOAT_FORMATS = sorted(MANTISSA_BITS, key=int)


def _samples(seed=0) -> np.ndarray:
    """Values over many binades, with zeros, tiny and huge values, inf and NaN."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((64, 64)) * np.exp2(rng.integers(-40, 40, (64, 64)))).astype(np.float32)
    x[0, :8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-39, 3e38, -65504.0]
    return x


@pytest.mark.parametrize("fmt", FLOAT_FORMATS)
def test_values_carry_at_most_the_listed_mantissa_bits(fmt):
    held = quantize(_samples(), fmt)
    finite = held[np.isfinite(held) & (held != 0)]
    mantissa, _ = np.frexp(np.abs(finite).astype(np.float64))          # in [0.5, 1)
    scaled = mantissa * 2.0 ** (mantissa_bits(fmt) + 1)
    assert np.array_equal(scaled, np.round(scaled))
    if mantissa_bits(fmt) < 23:                                         # the bound is tight
        assert not np.array_equal(mantissa * 2.0 ** mantissa_bits(fmt), np.round(mantissa * 2.0 ** mantissa_bits(fmt)))


@pytest.mark.parametrize("target", FLOAT_FORMATS)
@pytest.mark.parametrize("source", FLOAT_FORMATS)
def test_skipped_requantisation_is_the_identity(source, target):
    held = quantize(_samples(1), source)
    if holds_exactly(target, source):
        np.testing.assert_array_equal(quantize(held, target), held)
    # Block-float targets are never claimed: a transposed Bfp tensor needs new shared exponents.
    assert not (target in BFP_FORMATS and holds_exactly(target, source))


def test_unknown_formats_claim_nothing():
    assert mantissa_bits(DF.Int32) == 23 and mantissa_bits(None) == 23
    assert not holds_exactly(DF.Float16_b, DF.Int32)


@pytest.mark.parametrize("fmt", sorted(set(DF) - {DF.Invalid}, key=int))
@pytest.mark.parametrize("shape", [(), (5,), (3, 33), (2, 32, 1), (1, 17, 40)])
def test_rounding_before_padding_equals_rounding_the_padded_storage(fmt, shape):
    """kernels.common.result rounds a logical result, then pads it: the storage must be bit for bit
    what rounding the padded array gives (zero rounds to zero; appended zeros never move a block's
    shared exponent)."""
    from buda_runtime_sim.tensor import pad

    values = _samples(2).reshape(-1)[:int(np.prod(shape))].reshape(shape)
    padded_first = quantize(pad(values), fmt)
    rounded_first = pad(quantize(values, fmt))
    assert padded_first.shape == rounded_first.shape
    np.testing.assert_array_equal(rounded_first.view(np.uint32), padded_first.view(np.uint32))
