"""A tensor's values held as its data format's own bytes, decoded to float32 when a kernel reads them.

The simulator computes in float32, but a weight on the device is its format's bytes: bfloat16 bit
patterns, float16 / e5m2 values, or block-float codes and one shared exponent per block. Holding
that form instead of the float32 values takes 2 bytes a value for Float16_b (not 4), 1 + 1/16 for
Bfp8_b, and nothing at all for a bfloat16 framework weight (its array is the device bits).

Every codec's `values()` gives exactly the float32 values `formats.quantize` gave when it was made:
`encode` checks that round trip bit for bit (NaN payloads included) and answers None where it does
not hold, and the caller keeps float32 then. Codecs are views too: `swapped` exchanges two dims
without touching the bytes (a weight's transpose), and `values()` lays the result out C-ordered.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .blockfloat import BFP_FORMATS, decode_blocks_fast, encode_blocks
from .constants import BLOCK_SIZE
from .dataformat import DataFormat
from .float_errors import ignored
from .formats import FLOAT_LIMITS, _pack_codes, _unpack_codes, quantize

_FLOAT32 = np.dtype(np.float32)
_CASTS = {DataFormat.Float16_b: np.dtype(ml_dtypes.bfloat16), DataFormat.Float16: np.dtype(np.float16),
          DataFormat.Lf8: np.dtype(ml_dtypes.float8_e5m2)}


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal float32 bit patterns (NaN payloads and signed zeros included)."""
    return x.shape == y.shape and np.array_equal(np.ascontiguousarray(x).view(np.uint32),
                                                 np.ascontiguousarray(y).view(np.uint32))


class CastCodec:
    """Values held in a narrower float dtype (bfloat16, float16, e5m2), or float32 itself; any
    numpy view of the array (a transpose of a weight) is held without a copy."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def shape(self) -> tuple:
        return self.array.shape

    @property
    def nbytes(self) -> int:
        return self.array.nbytes if self.array.base is None else 0   # a view's bytes belong to its base

    def values_into(self, out: np.ndarray) -> None:
        """Write the float32 values into `out` (any strides, the codec's shape)."""
        array = self.array
        if array.dtype == _CASTS[DataFormat.Float16_b]:   # widening is a shift of the 16-bit pattern
            np.left_shift(array.view(np.uint16), np.uint32(16), out=out.view(np.uint32), dtype=np.uint32)
        else:
            out[...] = array

    def values(self) -> np.ndarray:
        out = np.empty(self.shape, np.float32)
        self.values_into(out)
        return out

    def swapped(self, dim0: int, dim1: int) -> "CastCodec":
        return CastCodec(np.swapaxes(self.array, dim0, dim1))


class BlockCodec:
    """Block-float values: one exponent byte per BLOCK_SIZE values of a row (the last dim, blocks
    starting at multiples of BLOCK_SIZE, as formats.quantize forms them) and each value's
    sign-magnitude code, packed 8 / code_bits codes to a byte."""

    __slots__ = ("exponents", "codes", "spec", "shape")

    def __init__(self, exponents: np.ndarray, codes: np.ndarray, spec, shape: tuple):
        self.exponents, self.codes, self.spec, self.shape = exponents, codes, spec, shape

    @property
    def nbytes(self) -> int:
        return self.exponents.nbytes + self.codes.nbytes

    def values(self) -> np.ndarray:
        rows, blocks = self.exponents.shape
        codes = self.codes if self.spec.code_bits == 8 else _unpack_codes(self.codes, self.spec.code_bits)
        values = decode_blocks_fast(self.exponents.reshape(-1), codes.reshape(-1, BLOCK_SIZE), self.spec)
        cols = self.shape[-1] if self.shape else 1
        return np.ascontiguousarray(values.reshape(rows, blocks * BLOCK_SIZE)[:, :cols]).reshape(self.shape)

    def values_into(self, out: np.ndarray) -> None:
        out[...] = self.values()

    def swapped(self, dim0: int, dim1: int) -> "SwappedCodec":
        return SwappedCodec(self, dim0, dim1)


class SwappedCodec:
    """Another codec's values with two dims exchanged (a transposed block-float weight: its blocks
    stay along the rows they were formed in)."""

    __slots__ = ("inner", "dims")

    def __init__(self, inner, dim0: int, dim1: int):
        self.inner, self.dims = inner, (dim0, dim1)

    @property
    def shape(self) -> tuple:
        shape = list(self.inner.shape)
        a, b = self.dims
        shape[a], shape[b] = shape[b], shape[a]
        return tuple(shape)

    @property
    def nbytes(self) -> int:
        return 0                                   # the inner codec's bytes, held by its owner too

    def values(self) -> np.ndarray:
        return np.ascontiguousarray(np.swapaxes(self.inner.values(), *self.dims))

    def values_into(self, out: np.ndarray) -> None:
        out[...] = np.swapaxes(self.inner.values(), *self.dims)

    def swapped(self, dim0: int, dim1: int):
        if sorted((dim0, dim1)) == sorted(self.dims):
            return self.inner
        return SwappedCodec(self, dim0, dim1)


def _encode_blocks(rounded: np.ndarray, fmt: DataFormat) -> BlockCodec:
    spec = BFP_FORMATS[fmt]
    shape = rounded.shape
    rows = rounded.reshape(-1, shape[-1]) if rounded.ndim else rounded.reshape(1, 1)
    cols = rows.shape[1]
    width = -(-cols // BLOCK_SIZE) * BLOCK_SIZE
    if width != cols:
        wide = np.zeros((rows.shape[0], width), np.float32)   # zeros never move a block's exponent
        wide[:, :cols] = rows
        rows = wide
    exponents, codes = encode_blocks(rows.reshape(-1, BLOCK_SIZE), spec, "host")
    codes = codes.reshape(rows.shape[0], width)
    if spec.code_bits != 8:
        codes = _pack_codes(codes, spec.code_bits)
    return BlockCodec(exponents.reshape(rows.shape[0], width // BLOCK_SIZE), codes, spec, shape)


def encode(values: np.ndarray, fmt: DataFormat, rounded: np.ndarray | None = None):
    """A codec holding `values` (float32, logical shape) as stored in `fmt`, or None where the
    format has no codec here or the bytes would not give back quantize(values, fmt) bit for bit.
    `rounded`: quantize(values, fmt) when the caller has it (block formats)."""
    if fmt in _CASTS:                     # quantize's own cast and saturation; widening it back is
        return CastCodec(_saturating_cast(np.asarray(values, np.float32), fmt))   # exact, nothing to check
    if fmt in BFP_FORMATS:
        rounded = quantize(values, fmt) if rounded is None else rounded
        codec = _encode_blocks(rounded, fmt)
        return codec if same_bits(codec.values(), rounded) else None
    return None


def _saturating_cast(values: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """`values` cast to fmt's dtype as formats.quantize rounds them: a finite value the cast turned
    into +-inf saturates at the format's largest finite value (inf and NaN stay)."""
    with ignored():
        narrow = values.astype(_CASTS[fmt])
    if fmt is DataFormat.Float16_b:      # (ml_dtypes' isinf takes ~6x as long as these two integer passes)
        infinite = np.bitwise_and(narrow.view(np.uint16), np.uint16(0x7FFF)) == np.uint16(0x7F80)
    else:
        infinite = np.isinf(narrow)
    if np.count_nonzero(infinite):
        grew = infinite & np.isfinite(values)
        narrow[grew] = np.copysign(FLOAT_LIMITS[fmt], values[grew]).astype(_CASTS[fmt])
    return narrow


def encode_exact(values: np.ndarray, fmt: DataFormat):
    """A codec giving back exactly `values` (float32, logical shape, held in `fmt` or not: a kernel's
    result), or None when `fmt` cannot hold them bit for bit (a moved block-float value whose
    new block needs another exponent) or has no codec here."""
    if fmt in _CASTS:
        with ignored():
            codec = CastCodec(values.astype(_CASTS[fmt]))
    elif fmt in BFP_FORMATS:
        codec = _encode_blocks(values, fmt)
    else:
        return None
    return codec if same_bits(codec.values(), values) else None


def wrap_bits(array: np.ndarray) -> CastCodec | None:
    """A codec sharing a framework array that already holds device bytes: a bfloat16 array (numpy's
    ml_dtypes bfloat16) is its own Float16_b storage. None for any other dtype."""
    if array.dtype == _CASTS[DataFormat.Float16_b]:
        return CastCodec(array)
    return None
