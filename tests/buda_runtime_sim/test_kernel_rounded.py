"""kernels/rounded.py builds the same tensors, bit for bit, as the general builders it stands in for."""

import numpy as np
import pytest

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.kernels.common import result
from buda_runtime_sim.kernels.rounded import logical_result, padded_result
from buda_runtime_sim.numerics_config import OpNumerics
from buda_runtime_sim.tensor import Tensor


def _values(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-40, 39, shape)).astype(np.float32)
    specials = np.array([np.inf, -np.inf, np.nan, -0.0, 3.4e38, -3.39e38], np.float32)  # and overflow on rounding
    flat = x.reshape(-1)
    flat[:6] = specials[: flat.size]
    return x


def _same(got: Tensor, want: Tensor):
    assert type(got) is type(want)
    np.testing.assert_array_equal(got.logical().view(np.uint32), want.logical().view(np.uint32))
    assert got.shape == want.shape and got.data_format == want.data_format
    assert got.padded.dtype == want.padded.dtype and got.padded.flags.c_contiguous == want.padded.flags.c_contiguous
    np.testing.assert_array_equal(got.padded.view(np.uint32), want.padded.view(np.uint32))


@pytest.mark.parametrize("fmt", [DataFormat.Float16_b, DataFormat.Float16, DataFormat.Bfp8_b, DataFormat.Float32])
def test_padded_result_matches_from_padded(fmt):
    x = _values((2, 32, 64))
    _same(padded_result(x.copy(), (2, 30, 64), fmt), Tensor.from_padded(x.copy(), (2, 30, 64), fmt))


@pytest.mark.parametrize("fmt", [DataFormat.Float16_b, DataFormat.Float16, DataFormat.Bfp8_b])
@pytest.mark.parametrize("shape", [(64, 32), (2, 32, 64), (5,), (3, 40), (4, 1), ()])
def test_logical_result_matches_result(fmt, shape):
    numerics = OpNumerics(output_df=fmt)
    x = _values(shape)
    _same(logical_result(x, numerics), result(x, numerics))


def test_logical_result_of_a_transposed_view_is_c_ordered():
    x = _values((64, 96))
    numerics = OpNumerics()
    got = logical_result(x.T, numerics)
    _same(got, result(x.T, numerics))
    assert got.padded.flags.c_contiguous
