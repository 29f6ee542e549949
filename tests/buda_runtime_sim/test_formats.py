"""Data-format codecs: exact round trips, error bounds, block independence, sizes and specials."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from buda_runtime_sim.blockfloat import BFP_FORMATS, decode_blocks, encode_blocks
from buda_runtime_sim.constants import BLOCK_SIZE, TILE_DIM
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.formats import pack_tiles, quantize, tile_bytes, unpack_tiles

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FORMATS = [f for f in DF if f != DF.Invalid]
BFP = list(BFP_FORMATS)
B_FAMILY = [DF.Bfp8_b, DF.Bfp4_b, DF.Bfp2_b]
A_FAMILY = [DF.Bfp8, DF.Bfp4, DF.Bfp2]
ROUNDINGS = ["host", "packer"]


def bits(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def assert_same_bits(actual, expected):
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(bits(actual), bits(expected))


def blocks_of(x):
    return x.reshape(-1, BLOCK_SIZE)


# ---- sizes -------------------------------------------------------------------------------------
SIZES = {DF.Bfp8: 1088, DF.Bfp8_b: 1088, DF.Bfp4: 576, DF.Bfp4_b: 576, DF.Bfp2: 320, DF.Bfp2_b: 320,
         DF.Float16: 2048, DF.Float16_b: 2048, DF.Float32: 4096, DF.Int8: 1024, DF.Lf8: 1024,
         DF.Int32: 4096, DF.UInt16: 2048, DF.RawUInt8: 1024, DF.RawUInt16: 2048, DF.RawUInt32: 4096}


@pytest.mark.parametrize("fmt", FORMATS)
def test_tile_bytes_match_spec(fmt):
    assert tile_bytes(fmt) == SIZES[fmt]


@pytest.mark.parametrize("fmt", FORMATS)
def test_packed_size_is_tiles_times_tile_bytes(fmt):
    x = np.ones((2, 40, 70), np.float32)            # per matrix: 2 x 3 tiles after padding
    assert len(pack_tiles(x, fmt)) == 2 * 2 * 3 * SIZES[fmt]
    assert len(pack_tiles(np.ones(5, np.float32), fmt)) == SIZES[fmt]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(), (7,), (0, 5), (5, 0), (2, 3, 37), (33, 65)])
def test_any_shape_round_trips_through_tile_bytes(fmt, shape):
    x = (np.random.default_rng(7).standard_normal(shape) * 50).astype(np.float32)
    q = quantize(x, fmt)
    assert q.shape == x.shape and q.dtype == np.float32
    assert_same_bits(unpack_tiles(pack_tiles(x, fmt), fmt, shape), q)
    assert_same_bits(quantize(q, fmt), q)                       # idempotent


def test_invalid_inputs_raise():
    with pytest.raises(ValueError):
        tile_bytes(DF.Invalid)
    with pytest.raises(ValueError):
        quantize(np.ones(4), DF.Bfp8_b, rounding="stochastic")
    with pytest.raises(ValueError):
        unpack_tiles(b"\0" * 10, DF.Float16_b, (32, 32))


# ---- exact round trips of representable values -------------------------------------------------
def representable(fmt, rng, n=4096):
    """Values the format holds exactly, built from its own encoding."""
    if fmt == DF.Float32:
        return rng.standard_normal(n).astype(np.float32) * np.float32(1e20)
    if fmt == DF.Float16:
        return rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    if fmt == DF.Float16_b:
        return rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    if fmt == DF.Lf8:
        return np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float32)
    if fmt in BFP_FORMATS:
        return bfp_values(BFP_FORMATS[fmt], rng, n // BLOCK_SIZE).reshape(-1)
    lo, hi = {DF.Int8: (-127, 127), DF.Int32: (-(1 << 24), 1 << 24), DF.UInt16: (0, 65535),
              DF.RawUInt8: (0, 255), DF.RawUInt16: (0, 65535), DF.RawUInt32: (0, 1 << 24)}[fmt]
    return rng.integers(lo, hi + 1, n).astype(np.float32)


def bfp_values(spec, rng, n_blocks):
    """Blocks decoded from random fields; one magnitude per block has its top bit set so the shared exponent is exact."""
    w = spec.magnitude_bits
    field_max = spec.max_exp - spec.rebias - (1 if spec.max_exp == 0xFF else 0)   # no inf block
    exponents = rng.integers(1 if spec.max_exp == 0xFF else 0, field_max + 1, n_blocks).astype(np.uint8)
    mags = rng.integers(0, 1 << w, (n_blocks, BLOCK_SIZE))
    mags[np.arange(n_blocks), rng.integers(0, BLOCK_SIZE, n_blocks)] |= 1 << (w - 1)
    signs = rng.integers(0, 2, mags.shape) * (mags > 0)
    return decode_blocks(exponents, (signs << w | mags).astype(np.uint8), spec)


@pytest.mark.parametrize("fmt", FORMATS)
def test_representable_values_round_trip_exactly(fmt):
    x = representable(fmt, np.random.default_rng(int(fmt)))
    finite = x[np.isfinite(x)]
    assert_same_bits(quantize(finite, fmt), finite)
    assert_same_bits(unpack_tiles(pack_tiles(finite, fmt), fmt, finite.shape), finite)


@pytest.mark.parametrize("fmt", BFP)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_bfp_fields_survive_encode(fmt, seed):
    spec = BFP_FORMATS[fmt]
    x = bfp_values(spec, np.random.default_rng(seed), 64)
    exponents, codes = encode_blocks(x, spec)
    assert_same_bits(decode_blocks(exponents, codes, spec), x)
    assert_same_bits(quantize(x, fmt, rounding="packer"), x)   # representable: no rounding either way


def test_int32_packs_integers_beyond_float32():
    x = np.array([2**31 - 1, -(2**31 - 1), 16777217, -5, 2**40], dtype=np.int64)
    words = np.frombuffer(pack_tiles(x, DF.Int32), "<u4")[:5]
    # sign-magnitude: bit 31 is the sign; 2**40 saturates at 2**31 - 1
    assert list(words) == [0x7FFFFFFF, 0xFFFFFFFF, 16777217, 0x80000005, 0x7FFFFFFF]


# ---- error bounds --------------------------------------------------------------------------------
# Float formats: relative error <= 2**-(mantissa bits + 1) inside the normal range.
FLOAT_BOUNDS = {DF.Float16: (2.0**-11, 2.0**-14, 65504.0), DF.Float16_b: (2.0**-8, 2.0**-126, 3e38),
                DF.Lf8: (2.0**-3, 2.0**-14, 57344.0)}


@pytest.mark.parametrize("fmt", list(FLOAT_BOUNDS))
@SETTINGS
@given(x=hnp.arrays(np.float32, st.integers(1, 200), elements=st.floats(-1e6, 1e6, width=32)))
def test_float_error_within_half_ulp(fmt, x):
    bound, smallest, largest = FLOAT_BOUNDS[fmt]
    inside = (np.abs(x) >= smallest) & (np.abs(x) <= largest)
    err = np.abs(quantize(x, fmt).astype(np.float64) - x)
    assert np.all(err[inside] <= bound * np.abs(x[inside]))


@pytest.mark.parametrize("fmt", [DF.Int8, DF.Int32, DF.UInt16, DF.RawUInt8, DF.RawUInt16])
def test_integer_error_within_half_inside_range(fmt):
    x = np.random.default_rng(0).uniform(-300, 70000, 5000).astype(np.float32)
    q = quantize(x, fmt).astype(np.float64)
    lo, hi = q.min(), q.max()
    inside = (x >= lo) & (x <= hi)
    assert np.all(np.abs(q - x)[inside] <= 0.5)
    assert np.all(q == np.round(q))
    assert np.array_equal(q[~inside], np.where(x[~inside] < lo, lo, hi))


def bfp_error_bound(x, spec):
    """Grid step 2**(S - 127 - (W - 1)) per block from its max exponent S: error <= step / 2, or < step when saturated."""
    s = (bits(np.abs(x)).reshape(-1, BLOCK_SIZE).max(axis=1) >> 23).astype(np.int64)
    step = np.exp2(s - 127.0 - (spec.magnitude_bits - 1))[:, None]
    saturated = np.abs(blocks_of(x)) > ((1 << spec.magnitude_bits) - 1) * step
    return np.where(saturated, step, step / 2)


@pytest.mark.parametrize("fmt", BFP)
@pytest.mark.parametrize("rounding", ROUNDINGS)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), log_scale=st.integers(-10, 10))   # inside the "a" exponent range
def test_bfp_error_within_half_step_of_block(fmt, rounding, seed, log_scale):
    """Host: |error| <= step/2 (step = 2**-(W-1) of the block's power-of-two max), < step when saturated,
    so <= 2**(1-W) of the block's max |x|. Packer: bfloat16 truncation + half-away Bfp8 rounding (< one
    Bfp8 step), then Bfp4/Bfp2 truncate the code (< one step): < step * (1 + 2**(W-7))."""
    spec = BFP_FORMATS[fmt]
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((8, 64)) * np.exp2(rng.integers(-3, 4, (8, 1)) + log_scale)).astype(np.float32)
    bound = bfp_error_bound(x, spec)
    w = spec.magnitude_bits
    relative = 2.0 ** (1 - w)
    if rounding == "packer":
        step = bfp_error_bound(x, spec).max(axis=1, keepdims=True) * 2   # covers the saturated case
        bound, relative = step * (1 + 2.0 ** (w - 7)), relative * (1 + 2.0 ** (w - 7))
    err = np.abs(blocks_of(quantize(x, fmt, rounding)).astype(np.float64) - blocks_of(x))
    assert np.all(err <= bound)
    assert np.all(err <= relative * np.abs(blocks_of(x)).max(axis=1, keepdims=True))


# ---- block independence --------------------------------------------------------------------------
wild_floats = st.one_of(st.floats(width=32, allow_nan=True, allow_infinity=True),
                        st.sampled_from([0.0, -0.0, 1e-45, -1e-40, 3e38, 65504.0, 1e-30]))


@pytest.mark.parametrize("fmt", BFP)
@pytest.mark.parametrize("rounding", ROUNDINGS)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), block=st.integers(0, 3 * 5 - 1),
       new=hnp.arrays(np.float32, BLOCK_SIZE, elements=wild_floats))
def test_changing_one_block_leaves_others_alone(fmt, rounding, seed, block, new):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((3, 5 * BLOCK_SIZE)) * np.exp2(rng.integers(-20, 20, (3, 5 * BLOCK_SIZE)))).astype(np.float32)
    y = x.copy()
    blocks_of(y)[block] = new
    qx, qy = blocks_of(quantize(x, fmt, rounding)), blocks_of(quantize(y, fmt, rounding))
    others = np.arange(len(qx)) != block
    assert_same_bits(qy[others], qx[others])


@pytest.mark.parametrize("fmt", BFP)
def test_column_padding_never_changes_results(fmt):
    x = np.random.default_rng(3).standard_normal((2, 3, 37)).astype(np.float32)
    wide = np.zeros((2, 3, 48), np.float32)
    wide[..., :37] = x
    assert_same_bits(quantize(x, fmt), quantize(wide, fmt)[..., :37])
    assert_same_bits(quantize(x[0, 0, 5], fmt), quantize(np.float32(x[0, 0, 5]), fmt))


# ---- specials: zero, -0, denormals, inf, NaN -----------------------------------------------------
@pytest.mark.parametrize("fmt", [DF.Float32, DF.Float16, DF.Float16_b, DF.Lf8])
def test_float_formats_keep_signed_zero_inf_nan(fmt):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    q = quantize(x, fmt)
    assert_same_bits(q[:4], x[:4])
    assert np.isnan(q[4])


def test_float_overflow_and_subnormals():
    assert quantize(np.float32(70000), DF.Float16) == 65504      # finite values saturate, as the device's
    assert quantize(np.float32(-60000), DF.Lf8) == -57344      # rounds down to the largest e5m2
    assert quantize(np.float32(-70000), DF.Lf8) == -57344
    assert quantize(np.float32(2.0**-20), DF.Float16) == np.float32(2.0**-20)   # fp16 subnormal kept
    assert quantize(np.float32(1e-45), DF.Float32) == np.float32(1e-45)


@pytest.mark.parametrize("fmt", [DF.Int8, DF.Int32, DF.UInt16])
def test_integer_specials(fmt):
    q = quantize(np.array([np.nan, np.inf, -np.inf, -0.0, -0.4, 0.5, 1.5, 2.5], np.float32), fmt)
    top = {DF.Int8: 127, DF.Int32: 2**31 - 1, DF.UInt16: 65535}[fmt]
    low = -top if fmt != DF.UInt16 else 0
    assert_same_bits(q, np.array([0, top, low, 0, 0, 0, 2, 2], np.float32))   # +0 only; ties to even


@pytest.mark.parametrize("fmt", BFP)
@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_bfp_zero_negative_zero_and_denormals_become_plus_zero(fmt, rounding):
    x = np.zeros(2 * BLOCK_SIZE, np.float32)
    x[:4] = [-0.0, 1e-45, -1e-39, 1.17e-38]                  # a block of zeros and denormals
    x[BLOCK_SIZE:BLOCK_SIZE + 3] = [1.0, -0.0, -2.0**-30]    # tiny negative value rounds to +0
    q = quantize(x, fmt, rounding)
    assert np.all(bits(q[:BLOCK_SIZE]) == 0)
    assert bits(q[BLOCK_SIZE + 1]) == 0 and bits(q[BLOCK_SIZE + 2]) == 0


@pytest.mark.parametrize("fmt", B_FAMILY)
@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_b_family_inf_and_nan(fmt, rounding):
    x = np.zeros(3 * BLOCK_SIZE, np.float32)
    x[:2] = [np.inf, 1.0]                                    # inf survives, smaller values flush to 0
    x[BLOCK_SIZE:BLOCK_SIZE + 2] = [-np.inf, 2.0]
    x[2 * BLOCK_SIZE:2 * BLOCK_SIZE + 2] = [np.nan, 5.0]
    q = quantize(x, fmt, rounding)
    assert q[0] == np.inf and q[1] == 0
    assert q[BLOCK_SIZE] == -np.inf and q[BLOCK_SIZE + 1] == 0
    nan_out = q[2 * BLOCK_SIZE]
    assert (np.isinf(nan_out) if fmt == DF.Bfp2_b else np.isnan(nan_out))   # Bfp2_b has no NaN code
    assert q[2 * BLOCK_SIZE + 1] == 0


@pytest.mark.parametrize("fmt", A_FAMILY)
@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_a_family_saturates_out_of_range(fmt, rounding):
    w = BFP_FORMATS[fmt].magnitude_bits
    largest = ((1 << w) - 1) * 2.0 ** (16 - (w - 1))          # exponent field 31 -> 2**16
    x = np.zeros(BLOCK_SIZE, np.float32)
    x[:5] = [np.inf, -np.nan, -1e30, 1e5, -1e-30]
    q = quantize(x, fmt, rounding)
    assert q[0] == largest and abs(q[1]) == largest and q[2] == -largest
    assert bits(q[4]) == 0
    tiny = quantize(np.full(BLOCK_SIZE, 2.0**-24, np.float32), fmt, rounding)   # < half the finest step
    assert np.all(tiny == 0)


# ---- rounding modes -----------------------------------------------------------------------------
def test_host_rounds_ties_to_even_packer_half_away():
    # Block max 1.x -> Bfp8_b step 2**-6. 1 + 2**-7 is 64.5 steps: host -> 64 (even), packer -> 65.
    x = np.zeros(BLOCK_SIZE, np.float32)
    x[:3] = [1.0, 1 + 2.0**-7, 1 + 3 * 2.0**-7]               # 64, 64.5, 65.5 steps
    assert list(quantize(x, DF.Bfp8_b)[:3]) == [1.0, 1.0, 1 + 2.0**-5]
    assert list(quantize(x, DF.Bfp8_b, "packer")[:3]) == [1.0, 1 + 2.0**-6, 1 + 2.0**-5]


def test_packer_truncates_bfp8_code_for_bfp4():
    # 1.2 -> bfloat16 truncation 1.1953125 = 76.5 Bfp8 steps -> 77 (half away) -> Bfp4 code 77 >> 4 = 4 -> 1.0.
    # The host encoder rounds 1.2 / 0.25 = 4.8 to 5 -> 1.25.
    x = np.zeros(BLOCK_SIZE, np.float32)
    x[:2] = [1.9, 1.2]
    assert quantize(x, DF.Bfp4_b, "packer")[1] == 1.0
    assert quantize(x, DF.Bfp4_b)[1] == 1.25


# ---- fast path == reference codec ----------------------------------------------------------------
@pytest.mark.parametrize("fmt", BFP)
def test_fast_quantize_matches_reference_codec_over_all_exponents(fmt):
    spec = BFP_FORMATS[fmt]
    rng = np.random.default_rng(int(fmt))
    raw = rng.integers(0, 1 << 32, (4096, BLOCK_SIZE), dtype=np.uint64).astype(np.uint32)
    # Squeeze exponents of each block into a window under a random block exponent 0..255.
    top = rng.integers(0, 256, (4096, 1)).astype(np.uint32)
    exp = np.clip(top.astype(np.int64) - rng.integers(0, 12, raw.shape), 0, 255).astype(np.uint32)
    raw = (raw & np.uint32(0x807FFFFF)) | (exp << np.uint32(23))
    x = raw.view(np.float32)
    expected = decode_blocks(*encode_blocks(x, spec), spec)
    got = quantize(x, fmt)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    ok = ~np.isnan(expected)
    np.testing.assert_array_equal(bits(got)[ok], bits(expected)[ok])


# ---- saturation: a finite value never becomes inf (issue 28: finfo.min masks became -inf, then NaN) --
F32_MIN = float(np.finfo(np.float32).min)


@pytest.mark.parametrize("fmt", [DF.Float16_b, DF.Float16, DF.Lf8])
def test_finite_values_beyond_range_saturate_and_specials_stay(fmt):
    limit = float(ml_dtypes.finfo({DF.Float16_b: ml_dtypes.bfloat16, DF.Float16: np.float16,
                                   DF.Lf8: ml_dtypes.float8_e5m2}[fmt]).max)
    x = np.array([F32_MIN, -F32_MIN, 1e30, -1e30, np.inf, -np.inf, np.nan, 1.0], np.float32)
    want = [-limit, limit, limit if limit < 1e30 else 1e30, -limit if limit < 1e30 else -1e30, np.inf, -np.inf]
    for values in (x, x.astype(np.float64), x.reshape(2, 4)):       # fast path, general path, 2-D
        q = quantize(values, fmt).reshape(-1)
        np.testing.assert_array_equal(q[:6], quantize(np.array(want, np.float32), fmt))
        assert np.isnan(q[6]) and q[7] == 1.0
        assert np.isfinite(q[:4]).all()
        np.testing.assert_array_equal(unpack_tiles(pack_tiles(values, fmt), fmt, values.shape).reshape(-1)[:6], q[:6])
    assert quantize(np.float32(F32_MIN), fmt) == -limit               # 0-d
    assert quantize(np.array(F32_MIN, np.float32), fmt) == -limit


@pytest.mark.parametrize("fmt", [DF.Float16_b, DF.Float16, DF.Lf8, DF.Bfp8_b, DF.Bfp8, DF.Bfp4_b, DF.Bfp2_b])
def test_an_attention_mask_of_finfo_min_stays_finite_and_zero_times_it_is_zero(fmt):
    """(1 - mask) * finfo(float32).min, the mask HF and PyBuda's demos build: where the mask is 1 the
    product must be 0 (not 0 * -inf = NaN), where it is 0 a large finite negative."""
    fill = quantize(np.full(16, F32_MIN, np.float32), fmt)
    assert np.isfinite(fill).all() and (fill < -1e4).all()
    assert (np.float32(0.0) * fill == 0).all()
