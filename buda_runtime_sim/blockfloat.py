"""Block-float codecs (Bfp8/4/2 and the `_b` twins): one shared exponent per BLOCK_SIZE values.

Two implementations that must agree bit for bit (tests check it):

- `encode_blocks` / `decode_blocks` work on the integer fields (exponent byte, sign-magnitude
  code) exactly as numerics.md describes; `pack_tiles` needs the fields, and they are the
  reference semantics.
- `quantize_blocks` is the fast path for `quantize`: rounding a value to the grid of its block
  is `(x + M) - M` with `M = 1.5 * 2**(k + 23)` in float32 (the FPU's own round-to-nearest-even
  does the work). Blocks the trick cannot serve (saturation, inf/NaN, tiny exponents) are
  re-done with the reference codec, so results never depend on which path ran.

Semantics (the host encoder of tt-metal, as numerics.md words it; `rounding="host"`):
shared exponent = max biased float32 exponent in the block; each magnitude, hidden one
restored, is shifted right by (shared - own exponent) and kept to W bits with round to nearest,
ties to even, saturating at 2**W - 1; magnitudes that round to 0 lose their sign.
`rounding="packer"` is the hardware packer: truncate to bfloat16, round the 7-bit (Bfp8)
magnitude half away from zero, and make Bfp4/Bfp2 by dropping low bits of that result.

Specials (a documented choice, identical in both paths):

- +-0 and float32 denormals encode as +0 (the device flushes denormals); -0 decodes as +0.
  Decoded magnitudes below float32's normal range (only `_b` shared exponents < 24 allow them)
  flush to +0 too, so quantize is idempotent.
- "a" family (5-bit exponent): the shared exponent is re-biased (8-bit - 112) and clamped to
  [0, 31]; values are then rounded on the clamped grid, so blocks above range saturate to
  +-(2**W - 1) * 2**(16 - (W - 1)) (inf and NaN included, keeping their sign) and blocks below
  range round on the finest grid (tiny values become 0).
- `_b` family: inf sets the shared exponent to 255 and encodes as magnitude 2**(W-1), which
  decodes to inf; NaN encodes as magnitude 2**W - 1, which decodes to NaN (Bfp2_b has one
  magnitude bit, so there NaN decodes as inf). Other values in such a block are shifted by
  (255 - own exponent) and almost always become 0, as the encoder would make them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .constants import BLOCK_SIZE
from .dataformat import DataFormat

_F32_BIAS = 127
_F32_MANT = 23
_A_FAMILY_REBIAS = 127 - 15   # 8-bit biased exponent minus this = 5-bit biased exponent
_ROUNDINGS = ("host", "packer")


@dataclass(frozen=True)
class BfpFormat:
    """Magnitude bits per value and the range of the stored (8-bit biased) shared exponent."""

    magnitude_bits: int
    min_exp: int      # smallest 8-bit biased exponent the shared field can express
    max_exp: int      # largest
    rebias: int       # subtract from the 8-bit biased exponent to get the stored field

    @property
    def code_bits(self) -> int:
        return self.magnitude_bits + 1


_A = dict(min_exp=_A_FAMILY_REBIAS, max_exp=_A_FAMILY_REBIAS + 31, rebias=_A_FAMILY_REBIAS)
_B = dict(min_exp=0, max_exp=255, rebias=0)
BFP_FORMATS = {
    DataFormat.Bfp8: BfpFormat(7, **_A),
    DataFormat.Bfp4: BfpFormat(3, **_A),
    DataFormat.Bfp2: BfpFormat(1, **_A),
    DataFormat.Bfp8_b: BfpFormat(7, **_B),
    DataFormat.Bfp4_b: BfpFormat(3, **_B),
    DataFormat.Bfp2_b: BfpFormat(1, **_B),
}


def check_rounding(rounding: str) -> str:
    if rounding not in _ROUNDINGS:
        raise ValueError(f"rounding must be one of {_ROUNDINGS}, got {rounding!r}")
    return rounding


# ---- reference codec: integer fields ----------------------------------------------------------
def encode_blocks(blocks: np.ndarray, spec: BfpFormat, rounding: str = "host"):
    """Encode float32 `blocks[..., BLOCK_SIZE]` into (exponent bytes [...], sign-magnitude codes [..., BLOCK_SIZE])."""
    check_rounding(rounding)
    bits = np.ascontiguousarray(blocks, dtype=np.float32).view(np.uint32)
    if bits.ndim == 0 or bits.shape[-1] != BLOCK_SIZE:
        raise ValueError(f"encode_blocks needs blocks of {BLOCK_SIZE} values in the last dim, got shape {bits.shape}")
    sign = bits >> 31
    exp = ((bits >> _F32_MANT) & 0xFF).astype(np.int32)
    man = bits & 0x7FFFFF
    nan = (exp == 0xFF) & (man != 0)
    # The packer rounds a bfloat16 to 7 magnitude bits, then drops bits for Bfp4/Bfp2.
    width = spec.magnitude_bits if rounding == "host" else 7
    if rounding == "packer":
        man = man & np.uint32(0x7F0000)
    shared = np.clip(exp.max(axis=-1), spec.min_exp, spec.max_exp)
    shift = shared[..., None] - exp + (_F32_MANT + 1 - width)
    sig = man | np.uint32(1 << _F32_MANT)
    s = np.clip(shift, 1, _F32_MANT + 2).astype(np.uint32)   # >= 25 always rounds to 0
    q = sig >> s
    rem = sig & ((np.uint32(1) << s) - np.uint32(1))
    half = np.uint32(1) << (s - np.uint32(1))
    if rounding == "host":
        q += (rem > half) | ((rem == half) & ((q & 1) == 1))
    else:
        q += rem >= half
    top = np.uint32((1 << width) - 1)
    q = np.where(shift <= 0, top, np.minimum(q, top))   # above the clamped exponent: saturate
    if rounding == "packer":
        q >>= np.uint32(7 - spec.magnitude_bits)
    q[exp == 0] = 0                                      # zeros and denormals
    if spec.max_exp == 0xFF:
        q[nan] = (1 << spec.magnitude_bits) - 1
    codes = np.where(q == 0, 0, (sign << np.uint32(spec.magnitude_bits)) | q).astype(np.uint8)
    return (shared - spec.rebias).astype(np.uint8), codes


def decode_blocks(exponents: np.ndarray, codes: np.ndarray, spec: BfpFormat) -> np.ndarray:
    """value = (-1)^sign * magnitude * 2^(shared - bias - (W - 1)), in float32; see module doc for inf/NaN."""
    w = spec.magnitude_bits
    codes = np.asarray(codes, dtype=np.uint8)
    shared = np.asarray(exponents, dtype=np.int32) + spec.rebias
    mag = (codes & ((1 << w) - 1)).astype(np.float64)
    with np.errstate(over="ignore"):
        values = np.ldexp(mag, (shared - _F32_BIAS - (w - 1))[..., None]).astype(np.float32)
    values[values < np.finfo(np.float32).tiny] = 0           # flush, as on input: quantize is idempotent
    if spec.max_exp == 0xFF:
        values[(shared[..., None] == 0xFF) & (mag > (1 << (w - 1)))] = np.nan
    return np.where(((codes >> w) & 1 == 1) & (values != 0), -values, values)


def decode_blocks_fast(exponents: np.ndarray, codes: np.ndarray, spec: BfpFormat) -> np.ndarray:
    """decode_blocks in float32 (a held weight is decoded on every read): a block whose shared
    exponent gives a normal power-of-two step is magnitude x step, exact and never below float32's
    normal range; the other blocks (the `_b` family's inf/NaN exponent, steps under the normal
    range) go through decode_blocks."""
    w = spec.magnitude_bits
    codes = np.asarray(codes, dtype=np.uint8)
    shared = np.asarray(exponents, dtype=np.int32) + spec.rebias
    step = (np.clip(shared - (w - 1), 1, 254).astype(np.uint32) << np.uint32(_F32_MANT)).view(np.float32)
    with np.errstate(over="ignore"):                    # (a 255 exponent's step: redone below)
        values = np.multiply(np.bitwise_and(codes, np.uint8((1 << w) - 1)), step[..., None], dtype=np.float32)
    negative = np.bitwise_and(codes, np.uint8(1 << w)).astype(bool)
    np.logical_and(negative, values != 0, out=negative)
    np.negative(values, out=values, where=negative)
    reference = (shared < w) | (shared > 254)
    if reference.any():
        values[reference] = decode_blocks(exponents[reference], codes[reference], spec)
    return values


# ---- fast path ---------------------------------------------------------------------------------
# The fast path walks the data in cache-sized chunks: the pairwise max over strided views and the
# per-block constants expanded with np.repeat are only cheap while a chunk sits in L2.
_CHUNK = 1 << 16                                  # values per chunk (256 KiB of float32)
_PAIRWISE_LEVELS = BLOCK_SIZE.bit_length() - 1
assert 1 << _PAIRWISE_LEVELS == BLOCK_SIZE, "the pairwise block max needs a power-of-two BLOCK_SIZE"


@dataclass(frozen=True)
class _Tables:
    """Per block exponent e (0..255, of the block's max |x|): what the fast path needs."""

    magic: np.ndarray       # float32 1.5 * 2**(k + 23), k = log2 of the grid step
    special: np.ndarray     # bool: block goes through the reference codec
    threshold: np.ndarray   # uint32 |x| bits from which values saturate
    limit: np.ndarray       # float32 largest magnitude, (2**W - 1) * 2**k


@functools.cache
def _tables(spec: BfpFormat) -> _Tables:
    e = np.arange(256)
    w = spec.magnitude_bits
    if spec.max_exp == 0xFF:
        # Exponents 1..23 bring the grid near float32's denormals (which the codec flushes), > 231
        # overflow M, 255 is inf/NaN. A block of zeros/denormals (e = 0) may use any coarse grid:
        # its values all round to +0.
        special = ((e > 0) & (e < 24)) | (e > 231)
        shared = np.where(special, 24, np.maximum(e, 24))
    else:
        special = e == 0xFF                       # NaN must not reach the clip below
        shared = np.clip(e, spec.min_exp, spec.max_exp)
    k = shared - (_F32_BIAS - 1) - w
    magic = (((k + _F32_MANT + _F32_BIAS) << _F32_MANT) | (1 << (_F32_MANT - 1))).astype(np.uint32).view(np.float32)
    # (2**W - 1/2) * 2**k, the smallest magnitude that rounds past 2**W - 1, has exponent `shared`.
    threshold = np.where(special, 0xFFFFFFFF, (shared << _F32_MANT) | (((1 << w) - 1) << (_F32_MANT - w)))
    limit = np.ldexp(np.float32((1 << w) - 1), k).astype(np.float32)
    return _Tables(magic, special, threshold.astype(np.uint32), limit)


def _round_chunks(flat: np.ndarray, out: np.ndarray, absmax: np.ndarray, tables: _Tables) -> None:
    """out = (x + M) - M chunk by chunk, M from each block's max |x| (also stored in `absmax`)."""
    bits = flat.view(np.uint32)
    scratch = np.empty(min(_CHUNK, flat.size), np.uint32)
    for start in range(0, flat.size, _CHUNK):
        stop = min(start + _CHUNK, flat.size)
        m = np.bitwise_and(bits[start:stop], np.uint32(0x7FFFFFFF), out=scratch[: stop - start])
        for _ in range(_PAIRWISE_LEVELS):
            m = np.maximum(m[0::2], m[1::2])
        absmax[start // BLOCK_SIZE: stop // BLOCK_SIZE] = m
        magic = np.repeat(tables.magic[m >> _F32_MANT], BLOCK_SIZE)
        np.add(flat[start:stop], magic, out=out[start:stop])
        np.subtract(out[start:stop], magic, out=out[start:stop])


def quantize_blocks(x: np.ndarray, spec: BfpFormat, rounding: str = "host") -> np.ndarray:
    """Round float32 `x` (size a multiple of BLOCK_SIZE, blocks contiguous) through the format; returns a new array."""
    check_rounding(rounding)
    x = np.ascontiguousarray(x, dtype=np.float32)
    blocks = x.reshape(-1, BLOCK_SIZE)
    if rounding == "packer" or blocks.size == 0:
        return decode_blocks(*encode_blocks(blocks, spec, rounding), spec).reshape(x.shape)
    tables = _tables(spec)
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    absmax = np.empty(blocks.shape[0], np.uint32)
    with np.errstate(invalid="ignore", over="ignore"):     # NaN/inf blocks are redone below
        _round_chunks(flat, out, absmax, tables)
    result = out.reshape(-1, BLOCK_SIZE)
    exp = absmax >> _F32_MANT
    idx = np.flatnonzero(absmax >= tables.threshold[exp])
    if idx.size:
        limit = tables.limit[exp[idx]][:, None]
        result[idx] = np.clip(result[idx], -limit, limit)
    idx = np.flatnonzero(tables.special[exp])
    if idx.size:
        result[idx] = decode_blocks(*encode_blocks(blocks[idx], spec, "host"), spec)
    return out.reshape(x.shape)
