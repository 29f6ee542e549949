"""Math fidelity: how many passes the multiplier makes over bit slices of its operands.

The phase model of numerics.md: per pass the multiplier takes at most 5 significand bits of
SrcA (hidden one + 4) and 7 of SrcB (hidden one + 6). Operands arrive as TF32 (the low 13
mantissa bits of float32 are truncated). Slices, cut by bit position on the float32 pattern:

- SrcA: hi = hidden one + mantissa bits 22..19, lo = bits 18..14. Two 5-bit slices cover 10 of
  TF32's 11 significand bits, so even HiFi4 drops SrcA's lowest TF32 bit (mantissa bit 13).
- SrcB: hi = hidden one + bits 22..17, lo = the rest of TF32 (bits 16..13).

Phases: 0 = hi(A) x hi(B), 1 = lo(A) x hi(B), 2 = hi(A) x lo(B), 3 = lo(A) x lo(B); LoFi runs
phase 0, HiFi2 0-1, HiFi3 0-2, HiFi4 0-3. Sums of phases are re-associated (every partial product
is exact in float32) so LoFi, HiFi2 and HiFi4 cost one float32 GEMM each and HiFi3 two (the
second accumulating into the first), or one when either operand's low slice is zero:

    LoFi  = hi(A) hi(B)          HiFi2 = A' hi(B)     (A' = hi(A) + lo(A))
    HiFi3 = A' B' - lo(A) lo(B)                      HiFi4 = A' B'  (B' = TF32 of B)

Operand roles: in matmul the first input goes to SrcB and the second to SrcA, so in
`fidelity_matmul(a, b)` `a` is sliced 7 bits at a time and `b` 5 bits at a time. In elementwise
multiply the first input is SrcA: `fidelity_multiply(a, b)` slices `a` 5 and `b` 7 bits at a time.

Specials: inf and NaN keep their value in the high slice and contribute 0 through the low slice
(no inf - inf); NaNs stay NaN even if their payload sits in dropped bits. Denormal operands are
sliced by bit position like normal ones (the device flushes them; the difference is below
2**-126 times the other operand).

Accumulation: Float32 keeps the float32 sum. Float16_b (Float16 for "a" formats) rounds the
result to that format once, at the end; the device rounds after every accumulate, so a deep
inner dimension carries more rounding error on hardware than here (the documented approximation).

Speed: with a Float16_b accumulation and operand slices that are all bfloat16 values (the default
formats), the phase terms run as one bfloat16 GEMM joined along the inner dim (bf16_gemm.py: the
same exact products and float32 sums, rounded once). Otherwise GEMMs run in torch on views of the
numpy arrays (no copies). Masks that an operand's
known format makes the identity are skipped (a bfloat16 value already fits SrcA's two slices and
TF32), and a read-only operand's slices are cut once and kept in a cache the caller owns (the
weight Tensor's `derived()` dict), so they live exactly as long as the weight. HiFi3 on Float16_b
operands (the defaults) first tries fidelity_bf16.py's straight-line path, which gives these bits
with fewer array passes and falls back here for specials.
"""

from __future__ import annotations

import functools

import numpy as np

from . import bf16_gemm, fidelity_bf16
from .accumulation import accumulate, gemm
from .bf16_gemm import torch_view
from .dataformat import DataFormat, MathFidelity
from .formats import mantissa_bits

# Masks on the float32 bit pattern and how many mantissa bits each keeps.
_TF32 = np.uint32(0xFFFFE000)       # sign, exponent, 10 mantissa bits
_SRCA_HI = np.uint32(0xFFF80000)    # 4 mantissa bits
_SRCA_FULL = np.uint32(0xFFFFC000)  # 4 + 5 mantissa bits
_SRCB_HI = np.uint32(0xFFFE0000)    # 6 mantissa bits
_KEPT_BITS = {int(_TF32): 10, int(_SRCA_HI): 4, int(_SRCA_FULL): 9, int(_SRCB_HI): 6}

class _Operand:
    """One operand as float32 bits, with its slices cut on demand.

    `data_format` is the format the values are known to be held in (None: any float32): a mask
    keeping at least as many mantissa bits as the format has is skipped (the identity), and a
    low slice below the format's precision is known to be zero without looking.
    """

    def __init__(self, x, data_format: DataFormat | None = None):
        if type(x) is np.ndarray:                          # the usual case: no lazy attribute lookups
            self.x = x if x.dtype == np.float32 else x.astype(np.float32)
            self.bits = self.x.view(np.uint32)
            self.shape = x.shape
        else:                                              # read on first use of `x`: it may be
            self._source = x                               # Tensor.storage()'s stand-in (widen_on_read.py)
            self.shape = np.shape(x)
        self.carried = mantissa_bits(data_format)
        self._finite = None

    @functools.cached_property
    def x(self) -> np.ndarray:
        return np.asarray(self._source, dtype=np.float32)  # views (transposes, broadcasts) are fine

    @functools.cached_property
    def bits(self) -> np.ndarray:
        return self.x.view(np.uint32)

    @property
    def finite(self) -> bool:
        if self._finite is None:
            self._finite = bool(np.isfinite(self.x).all())
        return self._finite

    def _and(self, mask: np.uint32) -> np.ndarray:
        """The values with `mask` applied to their bits, as a new float32 array (0-d included) in
        the operand's memory order: a transposed operand's slices are cut in one contiguous pass
        (a strided one into C order took 3-10x as long) and reach the GEMM transposed like the
        operand itself. torch's BLAS gives the same bits for either layout (8,739 shape and layout
        combinations checked; test_fidelity_bf16.py's layout test pins it)."""
        out = np.bitwise_and(self.bits, mask)
        return (out if self.bits.ndim else np.asarray(out)).view(np.float32)   # (0-d: a scalar back)

    def keeps_all(self, mask: np.uint32) -> bool:
        return _KEPT_BITS[int(mask)] >= self.carried

    def masked(self, mask: np.uint32) -> np.ndarray:
        if self.keeps_all(mask):
            return self.x
        out = self._and(mask)
        if not self.finite:
            np.copyto(out, self.x, where=np.isnan(self.x))
        return out

    def split(self, full_mask: np.uint32, high_mask: np.uint32, negate_low: bool = False):
        """(full, low): low = full - high (high - full if `negate_low`); low is None when the
        format makes it zero."""
        full = self.masked(full_mask)
        if self.keeps_all(high_mask):
            return full, None
        low = self._and(high_mask)
        with np.errstate(invalid="ignore"):             # inf - inf, cleared below
            np.subtract(low, full, out=low) if negate_low else np.subtract(full, low, out=low)
        if not self.finite:
            low[~np.isfinite(self.x)] = 0
        return full, low


def _phases(fidelity) -> int:
    if type(fidelity) is MathFidelity and fidelity is not MathFidelity.Invalid:
        return fidelity.phases
    fidelity = MathFidelity.parse(fidelity)
    if fidelity == MathFidelity.Invalid:
        raise ValueError("math fidelity Invalid has no phases")
    return fidelity.phases


def _phase_terms(src_a: _Operand, src_b: _Operand, phases: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(SrcA part, SrcB part) pairs whose products sum to the first `phases` phases."""
    if phases == 1:
        return [(src_a.masked(_SRCA_HI), src_b.masked(_SRCB_HI))]
    if phases == 2:
        return [(src_a.masked(_SRCA_FULL), src_b.masked(_SRCB_HI))]
    if phases == 4:
        return [(src_a.masked(_SRCA_FULL), src_b.masked(_TF32))]
    # HiFi3 = all four phases minus lo x lo, so no inf meets a zero low slice (inf * 0 = NaN).
    a_full, a_low = src_a.split(_SRCA_FULL, _SRCA_HI)
    b_full, minus_b_low = src_b.split(_TF32, _SRCB_HI, negate_low=True)
    terms = [(a_full, b_full)]
    if a_low is not None and minus_b_low is not None:
        terms.append((a_low, minus_b_low))
    return terms


def _srca_slices(src_a: _Operand, phases: int, cache: dict | None) -> tuple[np.ndarray, np.ndarray | None]:
    """(part, low) of the SrcA operand for `phases`, as torch tensors: part is the high slice (LoFi)
    or both slices (HiFi2-4); low is the low slice HiFi3 subtracts (None if zero or not needed). Kept in `cache`
    (a dict owned by a read-only weight tensor) so a weight is sliced once, not on every call."""
    key = ("srca", min(phases, 2), phases == 3)
    if cache is not None and key in cache:
        return cache[key]
    if phases == 1:
        slices = (torch_view(src_a.masked(_SRCA_HI)), None)
    elif phases == 3:
        full, low = src_a.split(_SRCA_FULL, _SRCA_HI)
        slices = (torch_view(full), torch_view(low) if low is not None and low.any() else None)
    else:
        slices = (torch_view(src_a.masked(_SRCA_FULL)), None)
    if cache is not None:
        cache[key] = slices
    return slices


def fidelity_matmul(a: np.ndarray, b: np.ndarray, fidelity: MathFidelity, accumulate_df: DataFormat, *,
                    a_format: DataFormat | None = None, b_format: DataFormat | None = None,
                    b_cache: dict | None = None) -> np.ndarray:
    """a @ b at `fidelity`: `a` is the SrcB operand (7-bit slices), `b` the SrcA operand (5-bit slices).

    a_format / b_format: formats the operands are held in, if known (masks that cannot change
    them are skipped). b_cache: a dict that lives as long as `b` stays unchanged (a weight's), to
    keep `b`'s slices between calls.
    """
    phases = _phases(fidelity)
    if phases == 3 and fidelity_bf16.applies(a_format, b_format):
        out = fidelity_bf16.matmul(a, b, accumulate_df, b_cache)
        if out is not None:
            return out
    return general_matmul(a, b, phases, accumulate_df, a_format, b_format, b_cache)


def general_matmul(a, b, phases: int, accumulate_df, a_format, b_format, b_cache) -> np.ndarray:
    """fidelity_matmul without its HiFi3 bfloat16 fast path (fidelity_bf16.matmul), for a caller
    that has tried that path already and got None: `phases` as _phases gives them."""
    src_b, src_a = _Operand(a, a_format), _Operand(b, b_format)
    if takes_bf16_route(accumulate_df, _matrix_size(src_a.shape), len(src_a.shape) > 2):
        out = _bf16_matmul(src_b, src_a, phases, b_cache)
        # (torch rounds a sum beyond bfloat16's range to inf; the float32 route below saturates it,
        # and defines every result that is not all finite, so both routes give one answer)
        if out is not None and np.count_nonzero(np.isfinite(out)) == out.size:
            return out
    b_part, b_low = _srca_slices(src_a, phases, b_cache)
    if phases != 3:
        a_part = src_b.masked(_TF32 if phases == 4 else _SRCB_HI)
        return accumulate(gemm(a_part, b_part).numpy(), accumulate_df)
    # HiFi3 = all four phases minus lo x lo = B' A' - lo(B) lo(A): a second GEMM only when both
    # low slices are non-zero (operands narrow enough make HiFi3 equal HiFi4).
    a_full, minus_a_low = src_b.split(_TF32, _SRCB_HI, negate_low=True)
    out = gemm(a_full, b_part)
    if b_low is not None and minus_a_low is not None and minus_a_low.any():
        gemm(minus_a_low, b_low, out=out)
    return accumulate(out.numpy(), accumulate_df)


def _bf16_srca_terms(src_a: _Operand, phases: int, cache: dict | None):
    """(the SrcA slices of each phase term side by side as one bfloat16 tensor, the term count), or
    None when a slice does not fit bfloat16; kept in `cache` like `_srca_slices`."""
    key = ("srca_bf16", phases)
    if cache is not None and key in cache:
        return cache[key]
    terms = None
    if phases == 1:
        terms = [src_a.masked(_SRCA_HI)]         # 4 mantissa bits: always a bfloat16 value
    elif _fits_bf16(src_a, _SRCA_FULL):
        full, low = src_a.split(_SRCA_FULL, _SRCA_HI) if phases == 3 else (src_a.masked(_SRCA_FULL), None)
        terms = [full] if low is None or not low.any() else [full, low]
    joined = None if terms is None else (bf16_gemm.side_by_side(terms, -2), len(terms))
    if cache is not None:
        cache[key] = joined
    return joined


def _bf16_srcb_terms(src_b: _Operand, phases: int, low_needed: bool) -> list[np.ndarray] | None:
    """The SrcB slices of each phase term (HiFi3 with `low_needed`: full and minus low, low None
    when the format makes it zero), or None when one does not fit bfloat16."""
    if phases in (1, 2):
        return [src_b.masked(_SRCB_HI)]          # 6 mantissa bits: always a bfloat16 value
    if not _fits_bf16(src_b, _TF32):
        return None
    if phases == 4 or not low_needed:
        return [src_b.masked(_TF32)]
    return list(src_b.split(_TF32, _SRCB_HI, negate_low=True))


def _fits_bf16(operand: _Operand, mask: np.uint32) -> bool:
    """Whether the operand masked by `mask` holds bfloat16 values: known from its format, else read
    off its values (a pass over the operand, far cheaper than the GEMM it saves)."""
    return min(_KEPT_BITS[int(mask)], operand.carried) <= 7 or bf16_gemm.holds_bf16(operand.x)


def _bf16_matmul(src_b: _Operand, src_a: _Operand, phases: int, b_cache: dict | None) -> np.ndarray | None:
    """The fidelity product as one bfloat16 GEMM (bf16_gemm.py), None where a slice does not fit."""
    b_terms = _bf16_srca_terms(src_a, phases, b_cache)
    if b_terms is None:
        return None
    b_joined, b_count = b_terms
    a_terms = _bf16_srcb_terms(src_b, phases, low_needed=b_count > 1)
    if a_terms is None:
        return None
    if a_terms[-1] is None:                          # lo(A) lo(B) vanishes with SrcB's low slice
        a_terms = a_terms[:1]
        b_joined = b_joined.narrow(-2, 0, b_joined.shape[-2] // b_count)
    return bf16_gemm.matmul(bf16_gemm.side_by_side(a_terms, -1), b_joined)


def matmul_operand_slices(x, role: str, fidelity, data_format: DataFormat | None = None) -> list[np.ndarray]:
    """One matmul operand's slices, in phase-term order: `sum_i op(srcb[i], srca[i])` over the two
    operands' lists is the product at `fidelity` for any bilinear `op` (matmul, convolution), since
    every partial product is exact in float32. role: "srcb" (the first matmul input, activations)
    or "srca" (the second, weights). HiFi3 has two terms (full x full - low x low), the rest one;
    a low slice the operand's known `data_format` makes zero comes back as None (skip the term)."""
    operand, phases = _Operand(x, data_format), _phases(fidelity)
    if role not in ("srca", "srcb"):
        raise ValueError(f"role must be 'srca' or 'srcb', got {role!r}")
    if phases == 3:   # an operand of unknown format always has a low slice (maybe all zero)
        if role == "srca":
            return list(operand.split(_SRCA_FULL, _SRCA_HI))
        return list(operand.split(_TF32, _SRCB_HI, negate_low=True))
    masks = {1: (_SRCA_HI, _SRCB_HI), 2: (_SRCA_FULL, _SRCB_HI), 4: (_SRCA_FULL, _TF32)}[phases]
    return [operand.masked(masks[0] if role == "srca" else masks[1])]


def operand_fits_bf16(x, role: str, fidelity, data_format: DataFormat | None = None) -> bool:
    """Whether every slice `matmul_operand_slices` cuts from `x` is a bfloat16 value, so the
    products can take the bfloat16 route (bf16_gemm.py)."""
    phases = _phases(fidelity)
    if phases == 1 or (phases == 2 and role == "srcb"):
        return True                              # SrcA's 4 or SrcB's 6 kept mantissa bits
    return _fits_bf16(_Operand(x, data_format), _TF32 if role == "srcb" else _SRCA_FULL)


def takes_bf16_route(accumulate_df, matrix: int, batched: bool = False, convolution: bool = False) -> bool:
    """Whether a product accumulated in `accumulate_df`, whose right operand is a `matrix`-element
    matrix (`batched`: with batch dims; `convolution`: a convolution's kernel matrix), runs as a
    bfloat16 GEMM in this process (where its slices fit bfloat16)."""
    if accumulate_df is not DataFormat.Float16_b and DataFormat.parse(accumulate_df) != DataFormat.Float16_b:
        return False
    return bf16_gemm.enabled(matrix, batched, convolution)


def _matrix_size(b_shape: tuple) -> int:
    """Elements of one matrix of a matmul's right operand (numpy shapes: its last two dims)."""
    size = 1
    for dim in tuple(b_shape)[-2:]:      # not np.prod: ~5 us a call, as much as a small op's arithmetic
        size *= int(dim)
    return size


def fidelity_multiply(a: np.ndarray, b: np.ndarray, fidelity: MathFidelity, *,
                      a_format: DataFormat | None = None, b_format: DataFormat | None = None) -> np.ndarray:
    """a * b (broadcasting) at `fidelity`: `a` is the SrcA operand (5-bit slices), `b` SrcB (7-bit)."""
    phases = _phases(fidelity)
    if phases == 3 and fidelity_bf16.applies(a_format, b_format):
        out = fidelity_bf16.multiply(np.asarray(a, np.float32), np.asarray(b, np.float32))
        if out is not None:
            return out
    terms = _phase_terms(_Operand(a, a_format), _Operand(b, b_format), phases)
    out = np.multiply(*terms[0], dtype=np.float32)
    for src_a_part, src_b_part in terms[1:]:
        out += np.multiply(src_a_part, src_b_part, dtype=np.float32)
    return np.asarray(out, dtype=np.float32)


# ---- architecture limits ---------------------------------------------------------------------------
def _arch_name(arch) -> str:
    return str(getattr(arch, "name", arch)).lower()


def is_fp32_accumulate_supported(arch) -> bool:
    """Grayskull's destination register has no float32 mode; Wormhole and later do."""
    return not _arch_name(arch).startswith("grayskull")


def check_accumulate_df(accumulate_df, arch_name) -> None:
    """Raise ValueError for an accumulation format the architecture cannot hold."""
    df = DataFormat.parse(accumulate_df)
    if df == DataFormat.Float32 and not is_fp32_accumulate_supported(arch_name):
        raise ValueError(
            "accumulate_df=Float32 is not available on Grayskull (no float32 destination register); "
            "use accumulate_df=Float16_b or a Wormhole device"
        )
