"""Math fidelity: how many passes the multiplier makes over bit slices of its operands.

The phase model of numerics.md: per pass the multiplier takes at most 5 significand bits of
SrcA (hidden one + 4) and 7 of SrcB (hidden one + 6). Operands arrive as TF32 (the low 13
mantissa bits of float32 are truncated). Slices, cut by bit position on the float32 pattern:

- SrcA: hi = hidden one + mantissa bits 22..19, lo = bits 18..14. Two 5-bit slices cover 10 of
  TF32's 11 significand bits, so even HiFi4 drops SrcA's lowest TF32 bit (mantissa bit 13).
- SrcB: hi = hidden one + bits 22..17, lo = the rest of TF32 (bits 16..13).

Phases: 0 = hi(A) x hi(B), 1 = lo(A) x hi(B), 2 = hi(A) x lo(B), 3 = lo(A) x lo(B); LoFi runs
phase 0, HiFi2 0-1, HiFi3 0-2, HiFi4 0-3. Sums of phases are re-associated (every partial product
is exact in float32) so LoFi, HiFi2 and HiFi4 cost one float32 GEMM each and HiFi3 one GEMM over a
doubled inner dimension, or a plain one when either operand's low slice is all zero:

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
"""

from __future__ import annotations

import ml_dtypes
import weakref

import numpy as np

from .dataformat import DataFormat, MathFidelity

_TF32 = np.uint32(0xFFFFE000)       # sign, exponent, 10 mantissa bits
_SRCA_HI = np.uint32(0xFFF80000)    # 4 mantissa bits
_SRCA_FULL = np.uint32(0xFFFFC000)  # 4 + 5 mantissa bits
_SRCB_HI = np.uint32(0xFFFE0000)    # 6 mantissa bits

_ACCUMULATE_CASTS = {
    DataFormat.Float32: None,
    DataFormat.Float16_b: ml_dtypes.bfloat16,
    DataFormat.Float16: np.float16,
}


class _Operand:
    """One operand as float32 bits, with its slices cut on demand."""

    def __init__(self, x):
        self.x = np.asarray(x, dtype=np.float32)          # views (transposes, broadcasts) are fine
        self.bits = self.x.view(np.uint32)
        self.finite = bool(np.isfinite(self.x).all())

    def masked(self, mask: np.uint32) -> np.ndarray:
        out = np.bitwise_and(self.bits, mask).view(np.float32)
        if not self.finite:
            np.copyto(out, self.x, where=np.isnan(self.x))
        return out

    def split(self, full_mask: np.uint32, high_mask: np.uint32, axis: int, negate_low: bool = False):
        """(buffer, full, low): full and low slices stacked on a new `axis` of one buffer, so a
        GEMM over [full | low] needs no copy; low = full - high (or high - full if `negate_low`)."""
        buf = np.empty(self.x.shape[:axis] + (2,) + self.x.shape[axis:], np.float32)
        stacked = np.moveaxis(buf, axis, 0)
        full, low = stacked[0, ...], stacked[1, ...]     # views, 0-d arrays for scalars
        np.bitwise_and(self.bits, full_mask, out=full.view(np.uint32))
        np.bitwise_and(self.bits, high_mask, out=low.view(np.uint32))
        with np.errstate(invalid="ignore"):             # inf - inf, cleared below
            np.subtract(low, full, out=low) if negate_low else np.subtract(full, low, out=low)
        if not self.finite:
            np.copyto(full, self.x, where=np.isnan(self.x))
            low[~np.isfinite(self.x)] = 0
        return buf, full, low


def _phases(fidelity) -> int:
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
    _, a_full, a_low = src_a.split(_SRCA_FULL, _SRCA_HI, 0)
    _, b_full, minus_b_low = src_b.split(_TF32, _SRCB_HI, 0, negate_low=True)
    return [(a_full, b_full), (a_low, minus_b_low)]


def accumulate(values: np.ndarray, accumulate_df) -> np.ndarray:
    """Round a float32 result to the accumulation format (float32 returned)."""
    df = DataFormat.parse(accumulate_df)
    if df not in _ACCUMULATE_CASTS:
        raise ValueError(f"accumulate_df must be one of {[f.name for f in _ACCUMULATE_CASTS]}, got {df.name}")
    cast = _ACCUMULATE_CASTS[df]
    values = np.asarray(values, dtype=np.float32)
    return values if cast is None else values.astype(cast).astype(np.float32)


_SPLITS: dict[int, tuple] = {}  # id(read-only weight) -> (weakref, (full, low)): weights are split once


def _srca_slices(array) -> tuple[np.ndarray, np.ndarray]:
    """(full, low) of the SrcA operand; for a read-only (weight) buffer computed once and kept,
    with `full` being the weight itself when masking changes nothing (bfloat16, Bfp formats)."""
    cacheable = isinstance(array, np.ndarray) and not array.flags.writeable and array.size >= 4096
    hit = _SPLITS.get(id(array)) if cacheable else None
    if hit is not None and hit[0]() is array:
        return hit[1]
    operand = _Operand(array)
    _, full, low = operand.split(_SRCA_FULL, _SRCA_HI, 0)
    if cacheable:
        if np.array_equal(full, operand.x, equal_nan=True):
            full = operand.x
        key = id(array)
        _SPLITS[key] = (weakref.ref(array, lambda _, key=key, cache=_SPLITS: cache.pop(key, None)), (full, low))
    return full, low


def fidelity_matmul(a: np.ndarray, b: np.ndarray, fidelity: MathFidelity, accumulate_df: DataFormat) -> np.ndarray:
    """a @ b at `fidelity`: `a` is the SrcB operand (7-bit slices), `b` the SrcA operand (5-bit slices)."""
    src_b = _Operand(a)
    phases = _phases(fidelity)
    if phases != 3:
        ((src_a_part, src_b_part),) = _phase_terms(_Operand(b), src_b, phases)
        return accumulate(np.matmul(src_b_part, src_a_part, dtype=np.float32), accumulate_df)
    # HiFi3 = all four phases minus lo x lo = B' A' - lo(B) lo(A): two GEMMs, the second skipped
    # when either low slice is zero (operands narrow enough that HiFi3 equals HiFi4).
    _, b_full, minus_b_low = src_b.split(_TF32, _SRCB_HI, 0, negate_low=True)
    a_full, a_low = _srca_slices(b)
    out = np.matmul(b_full, a_full, dtype=np.float32)
    if minus_b_low.any() and a_low.any():
        out += np.matmul(minus_b_low, a_low, dtype=np.float32)
    return accumulate(out, accumulate_df)


def matmul_operand_slices(x, role: str, fidelity) -> list[np.ndarray]:
    """One matmul operand's slices, in phase-term order: `sum_i op(srcb[i], srca[i])` over the two
    operands' lists is the product at `fidelity` for any bilinear `op` (matmul, convolution), since
    every partial product is exact in float32. role: "srcb" (the first matmul input, activations)
    or "srca" (the second, weights). HiFi3 has two terms (full x full - low x low), the rest one."""
    operand, phases = _Operand(x), _phases(fidelity)
    if role not in ("srca", "srcb"):
        raise ValueError(f"role must be 'srca' or 'srcb', got {role!r}")
    if phases == 3:
        if role == "srca":
            return list(operand.split(_SRCA_FULL, _SRCA_HI, 0)[1:])
        return list(operand.split(_TF32, _SRCB_HI, 0, negate_low=True)[1:])
    masks = {1: (_SRCA_HI, _SRCB_HI), 2: (_SRCA_FULL, _SRCB_HI), 4: (_SRCA_FULL, _TF32)}[phases]
    return [operand.masked(masks[0] if role == "srca" else masks[1])]


def fidelity_multiply(a: np.ndarray, b: np.ndarray, fidelity: MathFidelity) -> np.ndarray:
    """a * b (broadcasting) at `fidelity`: `a` is the SrcA operand (5-bit slices), `b` SrcB (7-bit)."""
    terms = _phase_terms(_Operand(a), _Operand(b), _phases(fidelity))
    return np.asarray(sum(np.multiply(src_a_part, src_b_part) for src_a_part, src_b_part in terms), dtype=np.float32)


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
