"""Data-format codecs: the round trip a tensor makes when stored in a device format, and its tile bytes.

`quantize` gives the float32 values a tensor holds after being stored in a format; `pack_tiles` /
`unpack_tiles` give the exact bytes (numerics.md layout), with unpack(pack(x)) == quantize(x).
Values are float32 first (the host tensor), except that integer formats round from the original
values so Int32 keeps integers above 2**24 when packing.

Documented choices, per format:

- Float32: identity; denormals, -0, inf and NaN kept.
- Float16 (e5m10), Float16_b (bfloat16), Lf8: IEEE round to nearest even, except that a finite
  value beyond the format's range saturates at its largest finite value (+-65504, +-3.3895e38,
  +-57344) instead of becoming inf; the target's subnormals, -0, inf and NaN are kept. The device
  never turns a finite value into inf: its packer saturates when the exponent narrows (FP16, FP8),
  and its matrix unit reads the bfloat16 pattern a rounding overflow leaves as a finite 2**128,
  never as inf (tt-isa-documentation, Packers/FormatConversion.md and FloatBitPatterns.md), so
  0 * finfo(float32).min is 0 there, not NaN. Block floats saturate the same way (blockfloat.py).
  Lf8 is e5m2 (numerics.md: sources disagree between e5m2 and e5m3; e5m2 is
  ml_dtypes.float8_e5m2, max 57344).
- Int8, Int32: sign-magnitude integers: round half to even, saturate at +-127 / +-(2**31 - 1),
  +-inf saturates, NaN becomes 0, -0 becomes +0.
- UInt16, RawUInt8/16/32: unsigned integers (the raw bits of an integer tensor): round half to
  even, saturate to [0, 2**n - 1], NaN becomes 0.
- Bfp8/4/2 and _b: see blockfloat.py (shared exponent per BLOCK_SIZE values, host or packer
  rounding, specials). `rounding` only matters for these; other formats ignore it.

quantize accepts any shape: the last dim is columns, leading dims are flattened into rows, and
a block is BLOCK_SIZE consecutive columns of one row starting at a multiple of BLOCK_SIZE
(columns are zero-padded internally, which never changes a result: zeros do not move a block's
shared exponent). This matches the tile layout, where a block is one row of one face.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .blockfloat import BFP_FORMATS, check_rounding, decode_blocks, encode_blocks, quantize_blocks
from .constants import BLOCK_SIZE, FACE_DIM, TILE_DIM, TILE_SIZE
from .dataformat import DataFormat
from .float_errors import ignored

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_FLOAT32 = np.dtype(np.float32)
_FLOAT_DTYPES = {
    DataFormat.Float32: np.dtype(np.float32),
    DataFormat.Float16: np.dtype(np.float16),
    DataFormat.Float16_b: np.dtype(ml_dtypes.bfloat16),
    DataFormat.Lf8: np.dtype(ml_dtypes.float8_e5m2),
}
# Largest finite value of each narrower float format, as float32: where a finite value saturates.
FLOAT_LIMITS = {fmt: np.float32(ml_dtypes.finfo(dtype).max) for fmt, dtype in _FLOAT_DTYPES.items()
                if fmt is not DataFormat.Float32}
_BFLOAT16_MAX = FLOAT_LIMITS[DataFormat.Float16_b]


# Mantissa bits (after the hidden one) any value held in a float format can have: a float32 bit
# mask keeping at least as many is the identity on it. Bfp8 magnitudes are 7 bits with no hidden
# one, so at most 6 follow the leading one (Bfp4: 2, Bfp2: 0). Formats not listed: 23.
MANTISSA_BITS = {
    DataFormat.Float32: 23, DataFormat.Float16: 10, DataFormat.Float16_b: 7, DataFormat.Lf8: 2,
    DataFormat.Bfp8: 6, DataFormat.Bfp8_b: 6, DataFormat.Bfp4: 2, DataFormat.Bfp4_b: 2,
    DataFormat.Bfp2: 0, DataFormat.Bfp2_b: 0,
}
# Formats whose every value bfloat16 holds exactly (same 8-bit exponent range or narrower, <= 7
# mantissa bits): quantizing them to Float16_b changes nothing.
_IN_BFLOAT16 = frozenset({DataFormat.Float16_b, DataFormat.Lf8, DataFormat.Bfp8, DataFormat.Bfp8_b,
                          DataFormat.Bfp4, DataFormat.Bfp4_b, DataFormat.Bfp2, DataFormat.Bfp2_b})


def mantissa_bits(fmt) -> int:
    """Most mantissa bits a value stored in `fmt` carries (23 when unknown or not a float format)."""
    return MANTISSA_BITS.get(fmt, 23)


def holds_exactly(target, source) -> bool:
    """True when quantize(x, target) == x for every x whose values are each representable in
    `source`: the re-quantisation can be skipped. Conservative: False unless proven (Float32, the
    same per-value format, or bfloat16 holding a narrower one). A block-float target is never
    the identity: values moved between blocks may need another shared exponent."""
    if target == DataFormat.Float32 or (target == source and target in _FLOAT_DTYPES):
        return True
    return target == DataFormat.Float16_b and source in _IN_BFLOAT16


@dataclass(frozen=True)
class _IntFormat:
    bits: int
    sign_magnitude: bool

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.sign_magnitude else (1 << self.bits) - 1

    @property
    def min(self) -> int:
        return -self.max if self.sign_magnitude else 0


_INT_FORMATS = {
    DataFormat.Int8: _IntFormat(8, True),
    DataFormat.Int32: _IntFormat(32, True),
    DataFormat.UInt16: _IntFormat(16, False),
    DataFormat.RawUInt8: _IntFormat(8, False),
    DataFormat.RawUInt16: _IntFormat(16, False),
    DataFormat.RawUInt32: _IntFormat(32, False),
}
_WORDS = {8: np.dtype("<u1"), 16: np.dtype("<u2"), 32: np.dtype("<u4")}


def _format(fmt) -> DataFormat:
    fmt = DataFormat.parse(fmt)
    if fmt not in _FLOAT_DTYPES and fmt not in _INT_FORMATS and fmt not in BFP_FORMATS:
        raise ValueError(f"data format {fmt.name} has no codec")
    return fmt


def tile_bytes(fmt) -> int:
    """Bytes one TILE_DIM x TILE_DIM tile occupies in `fmt` (Bfp: values + one exponent byte per block)."""
    fmt = _format(fmt)
    if fmt in BFP_FORMATS:
        return TILE_SIZE * BFP_FORMATS[fmt].code_bits // 8 + TILE_SIZE // BLOCK_SIZE
    bits = _INT_FORMATS[fmt].bits if fmt in _INT_FORMATS else _FLOAT_DTYPES[fmt].itemsize * 8
    return TILE_SIZE * bits // 8


# ---- value round trip ----------------------------------------------------------------------------
def _saturate(rounded: np.ndarray, source: np.ndarray, limit: np.float32) -> np.ndarray:
    """`rounded` (a new float32 array, the cast of `source`) with every value that a finite source
    value overflowed to +-inf set to +-limit; inf and NaN of the source stay. One check when
    nothing overflowed (the common case)."""
    infinite = np.isinf(rounded)
    if not np.count_nonzero(infinite):
        return rounded
    grew = infinite & np.isfinite(source)
    if np.count_nonzero(grew):
        rounded[grew] = np.copysign(limit, rounded[grew])
    return rounded


def bfloat16_values(values: np.ndarray, order: str = "K") -> np.ndarray:
    """float32 `values` rounded to bfloat16 (nearest even), as float32 in memory `order`; finite
    values saturate at +-3.3895e38 (quantize's Float16_b, for the kernels' shortcuts). Call under
    float_errors.ignored()."""
    return _saturate(values.astype(_BFLOAT16, order=order).astype(_FLOAT32), values, _BFLOAT16_MAX)


def _round_float(a: np.ndarray, fmt: DataFormat) -> np.ndarray:
    return _saturate(a.astype(_FLOAT_DTYPES[fmt]).astype(_FLOAT32), a, FLOAT_LIMITS[fmt])


def _round_int(values, spec: _IntFormat) -> np.ndarray:
    """Integers (as float64) after round half even + saturation; NaN -> 0, -0 -> +0."""
    v = np.rint(np.asarray(values, dtype=np.float64))
    v = np.nan_to_num(v, nan=0.0, posinf=spec.max, neginf=spec.min)
    return np.clip(v, spec.min, spec.max) + 0.0


def _quantize_bfp(a: np.ndarray, fmt: DataFormat, rounding: str) -> np.ndarray:
    if a.size == 0:
        return a.copy()
    rows = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)
    cols = rows.shape[1]
    if cols % BLOCK_SIZE == 0:
        return quantize_blocks(rows, BFP_FORMATS[fmt], rounding).reshape(a.shape)
    padded = np.zeros((rows.shape[0], -(-cols // BLOCK_SIZE) * BLOCK_SIZE), np.float32)
    padded[:, :cols] = rows
    return np.ascontiguousarray(quantize_blocks(padded, BFP_FORMATS[fmt], rounding)[:, :cols]).reshape(a.shape)


def quantize(array, fmt: DataFormat, rounding: str = "host") -> np.ndarray:
    """Return float32 values after a round trip through `fmt` (Float32 may return the input itself)."""
    if fmt is DataFormat.Float16_b and rounding == "host" and type(array) is np.ndarray and array.dtype == np.float32:
        with ignored():          # the default format, from a kernel: nothing to parse or check
            return _saturate(array.astype(_BFLOAT16).astype(_FLOAT32), array, _BFLOAT16_MAX)
    fmt = _format(fmt)
    check_rounding(rounding)
    if fmt in _INT_FORMATS:
        return _round_int(array, _INT_FORMATS[fmt]).astype(np.float32)
    a = np.asarray(array, dtype=np.float32)
    if fmt == DataFormat.Float32:
        return a
    if fmt in _FLOAT_DTYPES:
        with ignored():          # saturation, inf and NaN kept are the documented behaviour
            return _round_float(a, fmt)
    return _quantize_bfp(a, fmt, rounding)


# ---- tile layout ---------------------------------------------------------------------------------
def _tiled_dims(shape) -> tuple[int, int, int]:
    """[L, R, C] view of a shape (only the last two dims are tiled; 0-D/1-D become one row)."""
    two_d = (1,) * max(0, 2 - len(shape)) + tuple(int(d) for d in shape)
    return int(np.prod(two_d[:-2], dtype=np.int64)), two_d[-2], two_d[-1]


def _to_tiles(values: np.ndarray) -> np.ndarray:
    """[n_tiles, TILE_SIZE] in face order: tiles row-major, faces 0-3, each face row-major."""
    lead, rows, cols = _tiled_dims(values.shape)
    rt, ct, f = -(-rows // TILE_DIM), -(-cols // TILE_DIM), TILE_DIM // FACE_DIM
    padded = np.zeros((lead, rt * TILE_DIM, ct * TILE_DIM), values.dtype)
    padded[:, :rows, :cols] = values.reshape(lead, rows, cols)
    tiles = padded.reshape(lead, rt, f, FACE_DIM, ct, f, FACE_DIM).transpose(0, 1, 4, 2, 5, 3, 6)
    return tiles.reshape(-1, TILE_SIZE)


def _from_tiles(tiles: np.ndarray, shape) -> np.ndarray:
    lead, rows, cols = _tiled_dims(shape)
    rt, ct, f = -(-rows // TILE_DIM), -(-cols // TILE_DIM), TILE_DIM // FACE_DIM
    padded = tiles.reshape(lead, rt, ct, f, f, FACE_DIM, FACE_DIM).transpose(0, 1, 3, 5, 2, 4, 6)
    padded = padded.reshape(lead, rt * TILE_DIM, ct * TILE_DIM)
    return np.ascontiguousarray(padded[:, :rows, :cols]).reshape(tuple(shape))


def _pack_codes(codes: np.ndarray, bits: int) -> np.ndarray:
    """Pack `bits`-wide codes little-endian, first value in the lowest bits: [n, m] -> [n, m * bits / 8] bytes."""
    per_byte = 8 // bits
    shifts = (np.arange(per_byte, dtype=np.uint8) * bits)
    grouped = codes.reshape(codes.shape[0], codes.shape[1] // per_byte, per_byte).astype(np.uint8) << shifts
    return np.bitwise_or.reduce(grouped, axis=-1).astype(np.uint8)


def _unpack_codes(packed: np.ndarray, bits: int) -> np.ndarray:
    per_byte = 8 // bits
    shifts = (np.arange(per_byte, dtype=np.uint8) * bits)
    codes = (packed[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    return codes.reshape(packed.shape[0], packed.shape[1] * per_byte)


def pack_tiles(array, fmt: DataFormat, rounding: str = "host") -> bytes:
    """Bytes of `array` stored in `fmt`: [..., R, C] zero-padded to tiles, tiles in row-major order."""
    fmt = _format(fmt)
    check_rounding(rounding)
    if fmt in _INT_FORMATS:
        spec = _INT_FORMATS[fmt]
        ints = _to_tiles(_round_int(array, spec))
        words = np.abs(ints).astype(np.uint64)
        if spec.sign_magnitude:
            words |= (ints < 0).astype(np.uint64) << np.uint64(spec.bits - 1)
        return words.astype(_WORDS[spec.bits]).tobytes()
    tiles = _to_tiles(np.asarray(array, dtype=np.float32))
    if fmt in _FLOAT_DTYPES:
        dtype = _FLOAT_DTYPES[fmt]
        if fmt is not DataFormat.Float32:
            with ignored():
                tiles = _round_float(tiles, fmt)      # saturating, as quantize
        tiles = tiles.astype(dtype)
        return tiles.view(f"u{dtype.itemsize}").astype(_WORDS[dtype.itemsize * 8]).tobytes()
    spec = BFP_FORMATS[fmt]
    exponents, codes = encode_blocks(tiles.reshape(-1, BLOCK_SIZE), spec, rounding)
    n = tiles.shape[0]
    packed = _pack_codes(codes.reshape(n, TILE_SIZE), spec.code_bits)
    return np.concatenate([exponents.reshape(n, TILE_SIZE // BLOCK_SIZE), packed], axis=1).tobytes()


def unpack_tiles(data: bytes, fmt: DataFormat, shape) -> np.ndarray:
    """float32 values of logical `shape` from bytes written by `pack_tiles`."""
    fmt = _format(fmt)
    shape = tuple(int(d) for d in shape)
    lead, rows, cols = _tiled_dims(shape)
    n = lead * -(-rows // TILE_DIM) * -(-cols // TILE_DIM)
    size = tile_bytes(fmt)
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size != n * size:
        raise ValueError(f"{fmt.name} data for shape {shape} needs {n} tiles = {n * size} bytes, got {raw.size}")
    raw = raw.reshape(n, size)
    if fmt in _INT_FORMATS:
        spec = _INT_FORMATS[fmt]
        words = raw.view(_WORDS[spec.bits]).astype(np.int64)
        if spec.sign_magnitude:
            sign_bit = 1 << (spec.bits - 1)
            words = np.where(words & sign_bit, -(words & (sign_bit - 1)), words)
        values = words.astype(np.float32)
    elif fmt in _FLOAT_DTYPES:
        dtype = _FLOAT_DTYPES[fmt]
        values = raw.view(_WORDS[dtype.itemsize * 8]).astype(f"u{dtype.itemsize}").view(dtype).astype(np.float32)
    else:
        spec = BFP_FORMATS[fmt]
        blocks = TILE_SIZE // BLOCK_SIZE
        codes = _unpack_codes(np.ascontiguousarray(raw[:, blocks:]), spec.code_bits)
        values = decode_blocks(raw[:, :blocks].reshape(-1), codes.reshape(-1, BLOCK_SIZE), spec)
    return _from_tiles(values.reshape(n, TILE_SIZE), shape)
