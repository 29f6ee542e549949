"""Tensor.from_padded's and kernels.common.result's Float16_b shortcuts build the same tensors, bit for
bit, as the general steps (formats.quantize, then the tensor or compact_or_padded)."""

import numpy as np
import pytest

from buda_runtime_sim.compact_tensor import compact_or_padded
from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.formats import quantize
from buda_runtime_sim.kernels.common import result
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
def test_from_padded_matches_the_general_steps(fmt):
    x = _values((2, 32, 64))
    general = Tensor(np.asarray(quantize(x.copy(), fmt), dtype=np.float32), (2, 30, 64), fmt)
    _same(Tensor.from_padded(x.copy(), (2, 30, 64), fmt), general)


def _general_result(x, numerics):
    return compact_or_padded(quantize(np.asarray(x, dtype=np.float32), numerics.output_df), numerics.output_df)


@pytest.mark.parametrize("fmt", [DataFormat.Float16_b, DataFormat.Float16, DataFormat.Bfp8_b])
@pytest.mark.parametrize("shape", [(64, 32), (2, 32, 64), (5,), (3, 40), (4, 1), ()])
def test_result_matches_the_general_steps(fmt, shape):
    numerics = OpNumerics(output_df=fmt)
    x = _values(shape)
    _same(result(x, numerics), _general_result(x, numerics))


def test_result_of_a_transposed_view_is_c_ordered():
    x = _values((64, 96))
    numerics = OpNumerics()
    got = result(x.T, numerics)
    _same(got, _general_result(x.T, numerics))
    assert got.padded.flags.c_contiguous
