"""program_inputs.device_input: the same device tensor as Tensor.from_array, bit for bit, whether
the bfloat16 rounding is skipped (values already bfloat16) or not (anything else, NaNs included)."""

import ml_dtypes
import numpy as np
import pytest

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.tensor import Tensor
from tvm_buda import program_inputs
from tvm_buda.program_inputs import device_input, holds_bfloat16

BF16 = DataFormat.Float16_b


def _bits(words, shape=None) -> np.ndarray:
    array = np.asarray(words, np.uint32).view(np.float32)
    return array.reshape(shape) if shape is not None else array


def _bf16(shape, seed=0) -> np.ndarray:
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return values.astype(ml_dtypes.bfloat16).astype(np.float32)


def _same(a: Tensor, b: Tensor) -> None:
    assert a.shape == b.shape and a.data_format == b.data_format and a.dtype == b.dtype
    assert a.padded.shape == b.padded.shape and a.padded.dtype == b.padded.dtype
    np.testing.assert_array_equal(a.padded.view(np.uint32), b.padded.view(np.uint32))


SPECIAL_BF16 = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x00010000, 0x807F0000, 0x3F800000,
                0x7F7F0000, 0xFF7F0000, 0x00400000]   # +-0, +-inf, subnormals, 1, +-max, a subnormal


@pytest.mark.parametrize("array", [
    _bf16((4, 64)), _bf16((128, 64)), _bf16((8, 32, 32)), _bf16((4, 2, 32, 1)), _bf16((5,)), _bf16(()),
    _bits(SPECIAL_BF16 * 4, (5, 8)),
], ids=["4x64", "128x64", "8x32x32", "4x2x32x1", "1-d", "0-d", "specials"])
def test_bfloat16_values_skip_the_rounding_with_the_same_bits(array, monkeypatch):
    expected = Tensor.from_array(array, BF16)
    assert holds_bfloat16(array)
    monkeypatch.setattr(program_inputs.Tensor, "from_array", lambda *a: pytest.fail("rounded again"))
    _same(device_input(array, BF16), expected)


@pytest.mark.parametrize("words", [
    [0x3F800001],                 # one low bit
    [0x3F808000],                 # a tie: rounds to even
    [0x7FC00000],                 # the canonical NaN (still takes the rounding path)
    [0x7F810000],                 # a signalling NaN with a high payload: bfloat16 rounding changes it
    [0xFFC10000],                 # a negative NaN with a payload
    [0x7F800001],                 # a NaN whose payload is all low bits
    [0x00000001],                 # a float32 subnormal below bfloat16's
    [0x7F7FFFFF],                 # beyond bfloat16's range: saturates
], ids=["low-bit", "tie", "nan", "snan-payload", "neg-nan-payload", "nan-low-payload", "tiny", "overflow"])
def test_other_values_take_the_rounding_path(words):
    array = np.concatenate([_bf16((2, 16)).reshape(-1), _bits(words)]).reshape(3, 11)
    assert not holds_bfloat16(array)
    _same(device_input(array, BF16), Tensor.from_array(array, BF16))


def test_nan_payloads_are_rounded_as_from_array_rounds_them():
    """The case the NaN check exists for: low bits zero, yet the bfloat16 cast changes the bits."""
    array = _bits([0x7F810000, 0xFFC10000, 0x3F800000, 0], (2, 2))
    assert not (array.view(np.uint32) & 0xFFFF).any()
    rounded = Tensor.from_array(array, BF16).logical()
    assert not np.array_equal(rounded.view(np.uint32), array.view(np.uint32))
    _same(device_input(array, BF16), Tensor.from_array(array, BF16))


@pytest.mark.parametrize("case", ["float32-format", "bool", "int32", "transposed", "empty", "float16-format"])
def test_everything_else_is_from_array(case):
    base = _bf16((6, 40))
    array, fmt = {
        "float32-format": (base, DataFormat.Float32), "bool": (base > 0, BF16),
        "int32": (np.arange(12, dtype=np.int32).reshape(3, 4), BF16), "transposed": (base.T, BF16),
        "empty": (np.zeros((0, 4), np.float32), BF16), "float16-format": (base, DataFormat.Float16),
    }[case]
    _same(device_input(array, fmt), Tensor.from_array(array, fmt))
