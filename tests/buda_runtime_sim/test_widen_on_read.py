"""A tensor kept as bfloat16 bits widens exactly once, when something reads its storage, and
computes the same bits as a plain Tensor of the same values."""

import ml_dtypes
import numpy as np
import pytest

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.fidelity import fidelity_matmul
from buda_runtime_sim.tensor import Tensor
from buda_runtime_sim.widen_on_read import WidenOnReadTensor, widen


def _bits(shape, seed=0) -> np.ndarray:
    values = np.random.default_rng(seed).standard_normal(shape).astype(ml_dtypes.bfloat16)
    values.reshape(-1)[:4] = [np.inf, -np.inf, np.nan, -0.0]
    return values.view(np.int16)


def test_widen_gives_the_bfloat16_values_as_float32():
    bits = _bits((64, 96))
    assert np.array_equal(widen(bits), bits.view(ml_dtypes.bfloat16).astype(np.float32), equal_nan=True)
    assert np.array_equal(widen(bits.view(np.uint16)).view(np.uint32), widen(bits).view(np.uint32))


def test_storage_is_widened_on_first_read_only():
    bits = _bits((64, 96))
    tensor = WidenOnReadTensor(bits, (60, 96), DataFormat.Float16_b)
    assert not tensor.storage_made and tensor.derived() == {}          # the derived cache needs no widening
    stand_in = tensor.storage()
    assert stand_in.shape == (64, 96) and not tensor.storage_made      # shape only: still bits
    first = np.asarray(stand_in, dtype=np.float32)
    assert tensor.storage_made and first is tensor.padded and not first.flags.writeable
    assert np.array_equal(tensor.logical(), widen(bits)[:60], equal_nan=True)
    assert tensor.storage() is tensor.padded                       # once widened, the array itself


def test_a_plain_tensor_stores_its_array():
    plain = Tensor.from_array(np.ones((2, 3), np.float32))
    assert plain.storage() is plain.padded


def test_bits_must_be_16_bit():
    with pytest.raises(TypeError, match="16-bit"):
        WidenOnReadTensor(np.zeros((32, 32), np.float32), (32, 32), DataFormat.Float16_b)


@pytest.mark.parametrize("fidelity", [MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi3, MathFidelity.HiFi4])
@pytest.mark.parametrize("route", ["0", "1"])
@pytest.mark.parametrize("a_format", [None, DataFormat.Float16_b])   # Float16_b: HiFi3's fast path too
def test_matmul_through_the_stand_in_gives_the_same_bits(monkeypatch, fidelity, route, a_format):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    a = np.random.default_rng(2).standard_normal((4, 64, 128)).astype(ml_dtypes.bfloat16).astype(np.float32)
    bits = np.random.default_rng(3).standard_normal((128, 96)).astype(ml_dtypes.bfloat16).view(np.int16)
    plain = widen(bits)
    plain.flags.writeable = False
    cache = {}
    expected = fidelity_matmul(a, plain, fidelity, DataFormat.Float16_b, a_format=a_format,
                               b_format=DataFormat.Float16_b, b_cache=cache)
    for terms in ({}, cache):            # slices cut from the stand-in, or carried in (as an image does)
        lazy = WidenOnReadTensor(bits, (128, 96), DataFormat.Float16_b)
        lazy.derived().update(terms)
        got = fidelity_matmul(a, lazy.storage(), fidelity, DataFormat.Float16_b, a_format=a_format,
                              b_format=DataFormat.Float16_b, b_cache=lazy.derived())
        assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
        # with its slices carried in (either route's), the float32 storage is never read
        assert lazy.storage_made == (not terms)
