"""HiFi3 on bfloat16 operands (the default formats) in straight-line numpy: the same bits as
fidelity.py's general path, with fewer array passes and less Python per call.

With both operands held in Float16_b, HiFi3's slices are fixed by the format (fidelity.py):
SrcA's full slice and SrcB's TF32 slice are the operand itself, SrcA's low slice is its last three
mantissa bits (`x - hi(x)`) and SrcB's minus-low slice its last bit (`hi(x) - x`). The general path
cuts those slices with a finiteness check per operand (inf and NaN contribute 0 through a low
slice). Here the slices are cut without it, and the result is checked once instead: an inf or
NaN operand element reaches at least one result element (through its full slice, in every
product it takes part in), so a result that is all finite proves every operand finite, and then
the unchecked slices equal the checked ones. A result that is not all finite (specials, or an
overflow) gets None back, and the caller runs the general path, which defines the answer.

Every GEMM is the general path's call on equal operands in equal layouts (the torch call
`accumulation.gemm` makes for those ranks, `bf16_gemm.matmul`; low slices in their operand's memory
order, as fidelity._Operand cuts them), so float32 sums are added in the same order; on the bfloat16 route the phase terms are joined in one buffer (bfloat16 bits taken
straight from the high halves of the float32 words: exact, the values fit bfloat16). Weights'
slices come from, and go to, the same cache entries as the general path's; they are stored only
after a finite, non-empty result has proved the weight finite. Per call this is most of a
training step's Matmul time outside the GEMMs, so it avoids Python frames and numpy's Python
wrappers where a direct call does the same. tests/buda_runtime_sim/test_fidelity_bf16.py compares
both paths bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import accumulation, bf16_gemm, derived_budget
from .bf16_gemm import torch_view
from .dataformat import DataFormat

_SRCA_HI = np.uint32(0xFFF80000)    # hidden one + 4 mantissa bits (fidelity._SRCA_HI)
_SRCB_HI = np.uint32(0xFFFE0000)    # hidden one + 6 mantissa bits (fidelity._SRCB_HI)
_BF16 = DataFormat.Float16_b


def applies(a_format, b_format) -> bool:
    """Whether both operands are known to hold bfloat16 values (the fast paths' condition)."""
    return a_format is DataFormat.Float16_b and b_format is DataFormat.Float16_b


def _finite(values: np.ndarray) -> bool:
    """Every value finite (counted: ~0.5 us less than .all(), which numpy wraps in Python)."""
    return np.count_nonzero(np.isfinite(values)) == values.size


def _low(x: np.ndarray, mask: np.uint32, negate: bool) -> np.ndarray:
    """x - (x & mask) (`negate`: the opposite sign) as a new float32 array (0-d included), without
    special cases, in x's memory order (fidelity._Operand._and's layout)."""
    bits = np.bitwise_and(x.view(np.uint32), mask)
    out = (bits if x.ndim else np.asarray(bits)).view(np.float32)     # (a 0-d operand gives a scalar)
    return np.subtract(out, x, out=out) if negate else np.subtract(x, out, out=out)


def multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """HiFi3 a * b (a is SrcA, b SrcB; float32, numpy broadcasting) as fidelity_multiply gives it:
    a b + lo(a) (-lo(b)), summed in float32. None when the result is not all finite."""
    a_low = _low(a, _SRCA_HI, negate=False)
    minus_b_low = _low(b, _SRCB_HI, negate=True)
    out = np.multiply(a, b, dtype=np.float32)
    if type(out) is not np.ndarray:                 # 0-d operands give a numpy scalar
        out = np.asarray(out, dtype=np.float32)
    if a_low.shape == out.shape:                    # the low product into a_low's own buffer (same values)
        out += np.multiply(a_low, minus_b_low, out=a_low, dtype=np.float32)
    else:
        out += np.multiply(a_low, minus_b_low, dtype=np.float32)
    return out if np.count_nonzero(np.isfinite(out)) == out.size else None   # (_finite without its frame)


def matmul(a, b, accumulate_df, b_cache: dict | None) -> np.ndarray | None:
    """HiFi3 a @ b (a is SrcB, b SrcA) as fidelity_matmul gives it for bfloat16 operands, or None:
    the result is not all finite, or the case is one left to the general path (an operand under
    2-D, a low slice of the right operand that is all zero). `b` may be Tensor.storage()'s
    stand-in (widen_on_read.py): it is read only when its slices are not in `b_cache`."""
    if type(a) is not np.ndarray or a.dtype != np.float32:
        a = np.asarray(a, dtype=np.float32)
    b_shape = b.shape if type(b) is np.ndarray else np.shape(b)
    if a.ndim < 2 or len(b_shape) < 2:
        return None
    if (accumulate_df is _BF16 or DataFormat.parse(accumulate_df) == _BF16) and \
            bf16_gemm.enabled(b_shape[-2] * b_shape[-1], len(b_shape) > 2):    # fidelity.takes_bf16_route
        return _bf16_route(a, b, b_cache)
    return _float32_route(a, b, accumulate_df, b_cache)


# The weight-cache entries of fidelity._srca_slices and fidelity._bf16_srca_terms for HiFi3. The
# routes store theirs only with a finite, non-empty result, which proves `b` finite (every element
# of `b` takes part in a product through its full slice), so the slices cut here without a
# finiteness check are the general path's.
_SRCA_KEY = ("srca", 2, True)
_SRCA_BF16_KEY = ("srca_bf16", 3)


def _float32_route(a, b, accumulate_df, b_cache):
    """B' A' - lo(B) lo(A) as two float32 GEMMs, the second added into the first (fidelity_matmul)."""
    torch = bf16_gemm.torch_module()
    slices = None if b_cache is None else b_cache.get(_SRCA_KEY)
    cut = slices is None
    streamed = None
    if cut:
        b = np.asarray(b, dtype=np.float32)
        streamed = _own_temporary(b, b_cache)
        if streamed is None:
            low = _low(b, _SRCA_HI, negate=False)
            slices = (torch_view(b), torch.from_numpy(low) if _nonzero(low) else None)   # (low: ours, writable)
        else:                      # the low slice is cut into b's own memory once the first GEMM has read b
            slices, cut = (torch_view(b), None), False
    b_part, b_low = slices
    if a.ndim == b_part.ndim == 2:               # accumulation.gemm's GEMMs for these ranks, without its frame
        gemm, gemm_into = torch.mm, torch.Tensor.addmm_
    elif a.ndim == b_part.ndim == 3 and a.shape[0] == b_part.shape[0]:
        gemm, gemm_into = torch.bmm, torch.Tensor.baddbmm_
    else:
        gemm, gemm_into = accumulation.gemm, None
    out = gemm(torch_view(a), b_part)
    if streamed is not None:
        del b_part, slices
        b_low = torch.from_numpy(streamed) if _low_in_place(streamed) else None
    if b_low is not None:
        minus_a_low = _low(a, _SRCB_HI, negate=True)
        if _nonzero(minus_a_low):
            if gemm_into is None:
                accumulation.gemm(minus_a_low, b_low, out=out)
            else:
                gemm_into(out, torch.from_numpy(minus_a_low), b_low)
    out = out.numpy()
    if accumulate_df is _BF16:
        out = out.astype(ml_dtypes.bfloat16).astype(np.float32)     # accumulation.accumulate's default
    else:
        out = accumulation.accumulate(out, accumulate_df)
    if not _finite(out):
        return None
    if cut and b_cache is not None and out.size:
        b_cache[_SRCA_KEY] = slices
    return out


def _own_temporary(b: np.ndarray, b_cache) -> np.ndarray | None:
    """`b` made writable when it is a weight's decoded values that only this call holds (a
    StoredTensor's read: fresh memory of its own) and its slices would not be kept (the budget is
    spent), else None. Its low slice is then cut in place after the first GEMM, so a large weight
    costs one float32 temporary, not two (Llama's 32000 x 2048 head: 262 MB less at the peak)."""
    if b_cache is None or b.base is not None or b.flags.writeable or b.ndim < 2 \
            or derived_budget.would_keep(2 * b.nbytes):
        return None
    if type(b_cache) is not derived_budget.BudgetedCache:
        return None
    try:
        b.flags.writeable = True               # (its own memory, read-only only by convention)
    except ValueError:
        return None
    return b


_CHUNK = 1 << 16           # values per pass of _low_in_place (256 KB of temporaries)


def _low_in_place(b: np.ndarray) -> bool:
    """b <- b - hi(b) (_low's values, SrcA's low slice), chunk by chunk; whether any is non-zero."""
    flat = b.reshape(-1)
    nonzero = False
    for start in range(0, flat.size, _CHUNK):
        chunk = flat[start:start + _CHUNK]
        high = np.bitwise_and(chunk.view(np.uint32), _SRCA_HI).view(np.float32)
        np.subtract(chunk, high, out=chunk)
        nonzero = nonzero or _nonzero(chunk)
    return nonzero


def _bf16_route(a, b, b_cache):
    """[A' | -lo(A)] @ [B'; lo(B)] as one bfloat16 GEMM (fidelity._bf16_matmul), or None where the
    general path joins fewer terms (a low slice of B that is all zero)."""
    terms = None if b_cache is None else b_cache.get(_SRCA_BF16_KEY)
    if terms is None:
        if b_cache is not None and _SRCA_BF16_KEY in b_cache:
            return None                      # (the general path found slices wider than bfloat16)
        b = np.asarray(b, dtype=np.float32)
        b_low = _low(b, _SRCA_HI, negate=False)
        if not _nonzero(b_low):
            return None                      # the general path joins (and keeps) one term
        right = _joined_bf16(b, b_low, axis=-2)
    else:
        right, count = terms
        if count != 2:
            return None
    out = bf16_gemm.matmul(_joined_bf16(a, _low(a, _SRCB_HI, negate=True), axis=-1), right)
    if not _finite(out):
        return None
    if terms is None and b_cache is not None and out.size:
        b_cache[_SRCA_BF16_KEY] = (right, 2)
    return out


def _nonzero(low: np.ndarray) -> bool:
    """Whether a low slice (`_low`) has a non-zero element: counted on its bits (faster than
    .any() on float32), the same answer since a zero low slice element is +0.0 (x - x), never -0.0."""
    return np.count_nonzero(low.view(np.uint32)) != 0


def _joined_bf16(full: np.ndarray, low: np.ndarray, axis: int):
    """[full | low] along `axis` (-1 or -2), `low` the operand's low slice (`_low`), as a contiguous
    bfloat16 torch tensor like bf16_gemm.side_by_side's. Every value is a finite bfloat16 value (a
    NaN would differ in its payload, but a NaN operand makes the result NaN, and the caller then
    runs the general path), so its bfloat16 bits are the high half of its float32 word: those
    halves are shifted straight into a 16-bit buffer (at 8-32 K elements 0-4 us less than a
    float32 buffer and torch's conversion, up to 8 us less along the rows)."""
    width = full.shape[axis]
    shape = list(full.shape)
    shape[axis] = 2 * width
    out = np.empty(shape, np.uint16)
    first, second = (out[..., :width], out[..., width:]) if axis == -1 else (out[..., :width, :], out[..., width:, :])
    np.right_shift(full.view(np.uint32), 16, out=first, casting="unsafe")
    np.right_shift(low.view(np.uint32), 16, out=second, casting="unsafe")
    torch = bf16_gemm.torch_module()
    return torch.from_numpy(out).view(torch.bfloat16)
