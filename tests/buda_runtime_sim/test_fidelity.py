"""Math fidelity: phase model of numerics.md for matmul and elementwise multiply."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.dataformat import MathFidelity as MF
from buda_runtime_sim.fidelity import (
    accumulate,
    check_accumulate_df,
    fidelity_matmul,
    fidelity_multiply,
    is_fp32_accumulate_supported,
)
from buda_runtime_sim.formats import quantize

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FIDELITIES = [MF.LoFi, MF.HiFi2, MF.HiFi3, MF.HiFi4]

# Hand-worked operands. SrcB keeps hidden one + 6 mantissa bits per slice, SrcA hidden one + 4.
B_VAL = 1 + 2.0**-6 + 2.0**-7     # 1.0234375: hi(B) = 1 + 2**-6, lo(B) = 2**-7
A_VAL = 1 + 2.0**-4 + 2.0**-5     # 1.09375:   hi(A) = 1 + 2**-4, lo(A) = 2**-5
# phase 0 hi*hi = 1.015625 * 1.0625 = 1.0791015625
# phase 1 lo(A)*hi(B) = 2**-5 * 1.015625 = 0.03173828125      -> HiFi2 1.11083984375
# phase 2 hi(A)*lo(B) = 1.0625 * 2**-7 = 0.00830078125         -> HiFi3 1.119140625
# phase 3 lo*lo = 2**-12 = 0.000244140625                       -> HiFi4 1.119384765625 (= A * B)
EXPECTED = {MF.LoFi: 1.0791015625, MF.HiFi2: 1.11083984375, MF.HiFi3: 1.119140625, MF.HiFi4: 1.119384765625}


@pytest.mark.parametrize("fidelity", FIDELITIES)
def test_hand_worked_matmul_phases(fidelity):
    a = np.array([[B_VAL, 0.0], [0.0, -B_VAL]], np.float32)     # first matmul input -> SrcB
    b = np.array([[A_VAL, 0.0], [0.0, A_VAL]], np.float32)      # second -> SrcA
    out = fidelity_matmul(a, b, fidelity, DF.Float32)
    np.testing.assert_array_equal(out, np.array([[1, 0], [0, -1]], np.float32) * np.float32(EXPECTED[fidelity]))


@pytest.mark.parametrize("fidelity", FIDELITIES)
def test_hand_worked_multiply_phases(fidelity):
    # Elementwise multiply: the first input is SrcA.
    out = fidelity_multiply(np.float32(A_VAL), np.array([B_VAL, -B_VAL], np.float32), fidelity)
    np.testing.assert_array_equal(out, np.array([1, -1], np.float32) * np.float32(EXPECTED[fidelity]))


def test_matmul_operand_roles():
    # Swapped, A_VAL sits in SrcB where it fits one slice and B_VAL in SrcA where hi = 1.0.
    out = fidelity_matmul(np.array([[A_VAL]], np.float32), np.array([[B_VAL]], np.float32), MF.LoFi, DF.Float32)
    assert out[0, 0] == np.float32(A_VAL)


def test_tf32_and_srca_bits_dropped_even_at_hifi4():
    one = np.ones((1, 1), np.float32)
    # SrcB keeps all of TF32: mantissa bit 13 (2**-10) survives, bit 12 (2**-11) is truncated.
    assert fidelity_matmul(np.full((1, 1), 1 + 2.0**-10 + 2.0**-11, np.float32), one, MF.HiFi4, DF.Float32) == 1 + 2.0**-10
    # SrcA's two 5-bit slices reach mantissa bit 14 (2**-9) but not bit 13 (2**-10).
    assert fidelity_matmul(one, np.full((1, 1), 1 + 2.0**-9 + 2.0**-10, np.float32), MF.HiFi4, DF.Float32) == 1 + 2.0**-9


def test_hifi4_is_exact_for_bfloat16_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 96)).astype(ml_dtypes.bfloat16).astype(np.float32)
    b = rng.standard_normal((96, 48)).astype(ml_dtypes.bfloat16).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b)
    out = fidelity_matmul(a, b, MF.HiFi4, DF.Float32)
    assert np.all(np.abs(out - exact) <= 1e-6 * scale)
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=0, atol=1e-5 * scale.max())


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_error_shrinks_with_fidelity(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    err = [np.abs(fidelity_matmul(a, b, f, DF.Float32) - exact).mean() for f in FIDELITIES]
    assert err[0] >= err[1] >= err[2] >= err[3]
    assert err[0] > 2 * err[1]          # SrcA's 5 bits dominate LoFi, SrcB's 7 bits HiFi2
    x, y = a[:, :32], b[:32].T
    err = [np.abs(fidelity_multiply(x, y, f) - x.astype(np.float64) * y).mean() for f in FIDELITIES]
    assert err[0] >= err[1] >= err[2] >= err[3]


def test_phases_needed_for_full_precision():
    """numerics.md: Bfp4/Bfp2 inputs reach full precision in 1 phase, Bfp8 in 2, bfloat16 in 4."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal((64, 32)).astype(np.float32)

    def outputs(fmt):
        qa, qb = quantize(a, fmt), quantize(b.T, fmt).T          # blocks along the inner dim for both
        return [fidelity_matmul(qa, qb, f, DF.Float32) for f in FIDELITIES]

    lofi, hifi2, hifi3, hifi4 = outputs(DF.Bfp4_b)
    np.testing.assert_array_equal(lofi, hifi4)
    np.testing.assert_array_equal(hifi3, hifi4)
    lofi, hifi2, hifi3, hifi4 = outputs(DF.Bfp8_b)
    np.testing.assert_array_equal(hifi2, hifi4)
    np.testing.assert_array_equal(hifi3, hifi4)
    assert not np.array_equal(lofi, hifi4)
    lofi, hifi2, hifi3, hifi4 = outputs(DF.Float16_b)
    assert not np.array_equal(hifi3, hifi4)


# ---- accumulation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("df, cast", [(DF.Float16_b, ml_dtypes.bfloat16), (DF.Float16, np.float16)])
def test_low_precision_accumulation_rounds_result(df, cast):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((16, 256)).astype(np.float32), rng.standard_normal((256, 8)).astype(np.float32)
    full = fidelity_matmul(a, b, MF.HiFi3, DF.Float32)
    out = fidelity_matmul(a, b, MF.HiFi3, df)
    np.testing.assert_array_equal(out, full.astype(cast).astype(np.float32))


def test_accumulate_rejects_other_formats():
    with pytest.raises(ValueError, match="accumulate_df"):
        accumulate(np.ones(2, np.float32), DF.Bfp8_b)
    with pytest.raises(ValueError):
        fidelity_matmul(np.ones((2, 2)), np.ones((2, 2)), MF.Invalid, DF.Float32)


def test_grayskull_has_no_fp32_accumulation():
    assert not is_fp32_accumulate_supported("grayskull")
    assert is_fp32_accumulate_supported("wormhole_b0")
    with pytest.raises(ValueError, match="Float16_b.*Wormhole"):
        check_accumulate_df(DF.Float32, "Grayskull")
    check_accumulate_df(DF.Float16_b, "grayskull")
    check_accumulate_df("Float32", "wormhole_b0")


# ---- shapes and specials ---------------------------------------------------------------------------
def test_shapes_follow_numpy():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3, 5, 7)).astype(np.float32), rng.standard_normal((7, 4)).astype(np.float32)
    assert fidelity_matmul(a, b, MF.HiFi3, DF.Float32).shape == (2, 3, 5, 4)
    assert fidelity_matmul(a[0, 0, 0], b, MF.LoFi, DF.Float16_b).shape == (4,)
    assert fidelity_multiply(a, b[:, :1].T, MF.HiFi2).shape == (2, 3, 5, 7)
    for fidelity in FIDELITIES:
        assert fidelity_multiply(np.float32(2), np.float32(3), fidelity) == 6
        assert fidelity_multiply(a.T, 2.0, fidelity).shape == (7, 5, 3, 2)          # non-contiguous view
    batch = np.broadcast_to(b, (3,) + b.shape)                                      # stride-0 operand
    assert fidelity_matmul(a[0, 0], batch, MF.HiFi3, DF.Float32).shape == (3, 5, 4)


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.filterwarnings("ignore:invalid value encountered")      # the signalling NaN below
def test_inf_and_nan_propagate(fidelity):
    low_payload_nan = np.array([0x7F800001], np.uint32).view(np.float32)[0]   # payload only in dropped bits
    x = np.array([np.inf, -np.inf, low_payload_nan, 1.5], np.float32)
    y = np.array([1.25, 3.0, 1.0, 1.0], np.float32)
    for out in (fidelity_multiply(x, y, fidelity), fidelity_multiply(y, x, fidelity)):
        assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])
    row = fidelity_matmul(np.array([[np.inf, 1.0]], np.float32), np.ones((2, 1), np.float32), fidelity, DF.Float32)
    assert row[0, 0] == np.inf
    col = fidelity_matmul(np.ones((1, 2), np.float32), np.array([[1.0], [-np.inf]], np.float32), fidelity, DF.Float32)
    assert col[0, 0] == -np.inf


@pytest.mark.parametrize("fidelity", FIDELITIES)
def test_matmul_is_sum_of_elementwise_products(fidelity):
    """matmul(a, b)[i, j] = sum_k multiply(b[k, j], a[i, k]): b is SrcA in both, a is SrcB."""
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 6, 40)).astype(np.float32), rng.standard_normal((40, 5)).astype(np.float32)
    terms = fidelity_multiply(b[None, None], a[..., None], fidelity).astype(np.float64)   # [2, 6, 40, 5]
    expected = terms.sum(axis=-2)
    tol = 1e-6 * np.abs(terms).sum(axis=-2)
    assert np.all(np.abs(fidelity_matmul(a, b, fidelity, DF.Float32) - expected) <= tol)
    assert np.all(np.abs(fidelity_matmul(a[0, 0], b, fidelity, DF.Float32) - expected[0, 0]) <= tol[0, 0])
    assert np.all(np.abs(fidelity_matmul(a[0], b[:, 0], fidelity, DF.Float32) - expected[0, :, 0]) <= tol[0, :, 0])
