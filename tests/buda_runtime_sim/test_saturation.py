"""A finite result never becomes inf by rounding to a device format (formats.py: values beyond a
format's range saturate at its largest finite value, as the device's packer and matrix unit do),
on every path that rounds: quantize, the kernels' Float16_b shortcuts, accumulation, and both GEMM
routes. Genuine inf and NaN stay what they are."""

import ml_dtypes
import numpy as np
import pytest

from buda_runtime_sim import float_errors
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.dataformat import MathFidelity as MF
from buda_runtime_sim.fidelity import accumulate, fidelity_matmul
from buda_runtime_sim.formats import bfloat16_values
from buda_runtime_sim.kernels.common import result
from buda_runtime_sim.numerics_config import OpNumerics
from buda_runtime_sim.tensor import Tensor

BF16_MAX = np.float32(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
F32_MAX = np.float32(np.finfo(np.float32).max)


def test_bfloat16_values_saturates_finite_and_keeps_specials():
    x = np.array([F32_MAX, -F32_MAX, 3.3961e38, np.inf, -np.inf, np.nan, 1.0, -0.0], np.float32)
    with float_errors.ignored():
        got = bfloat16_values(x)
    np.testing.assert_array_equal(got[:3], [BF16_MAX, -BF16_MAX, BF16_MAX])
    assert got[3] == np.inf and got[4] == -np.inf and np.isnan(got[5]) and got[6] == 1.0
    assert np.signbit(got[7])
    with float_errors.ignored():   # a transposed view in C order, as kernels.common.result asks
        t = bfloat16_values(np.stack([x, x]).T, order="C")
    assert t.flags.c_contiguous and t[0, 0] == BF16_MAX


def test_result_and_from_padded_shortcuts_saturate():
    x = np.full((4, 40), -F32_MAX, np.float32)
    x[0, 0] = -np.inf
    for tensor in (result(x, OpNumerics()), Tensor.from_padded(np.pad(x, ((0, 28), (0, 24))), x.shape, DF.Float16_b)):
        values = tensor.logical()
        assert values[0, 0] == -np.inf
        assert (values.reshape(-1)[1:] == -BF16_MAX).all()


@pytest.mark.parametrize("df, top", [(DF.Float16_b, BF16_MAX), (DF.Float16, np.float32(65504.0))])
def test_accumulation_saturates(df, top):
    sums = np.array([F32_MAX, -1e30, np.inf], np.float32)
    with float_errors.ignored():
        got = accumulate(sums, df)
    assert got[0] == top and got[2] == np.inf
    assert got[1] == (-top if df is DF.Float16 else accumulate(np.float32(-1e30)[None], df)[0])


@pytest.mark.parametrize("route", ["0", "1"])
@pytest.mark.parametrize("fidelity", [MF.LoFi, MF.HiFi3, MF.HiFi4])
def test_matmul_sum_beyond_bfloat16_saturates_on_both_routes(monkeypatch, route, fidelity):
    """Powers of two 2**127 .. 2**119 (exact in every slice) sum, exactly in float32, to 2**128 - 2**119,
    finite in float32 and half way between bfloat16's largest and 2**128, which IEEE rounding makes inf:
    the bfloat16 GEMM (torch rounds it) and the float32 route must both give the saturated sum."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    a = np.zeros((64, 64), np.float32)
    a[:, :9] = 2.0 ** np.arange(127, 118, -1)
    b = np.zeros((64, 64), np.float32)
    b[:9, :] = 1.0
    b[:9, 1] = -1.0
    assert np.isfinite(a.astype(np.float64) @ b.astype(np.float64)).all()
    with float_errors.ignored():
        out = fidelity_matmul(a, b, fidelity, DF.Float16_b, a_format=DF.Float16_b, b_format=DF.Float16_b)
    assert np.isfinite(out).all()
    assert (out[:, 0] == BF16_MAX).all() and (out[:, 1] == -BF16_MAX).all() and (out[:, 2:] == BF16_MAX).all()
