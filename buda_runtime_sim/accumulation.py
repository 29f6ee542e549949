"""The destination register's side of a product: float32 GEMMs that can add into their result, and
the rounding of a finished sum to the accumulation format.

Shared by the general fidelity path (fidelity.py) and its HiFi3 bfloat16 fast path (fidelity_bf16.py),
which must sum in the same order and round the same way to give the same bits.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .bf16_gemm import torch_view
from .dataformat import DataFormat
from .formats import bfloat16_values, quantize

_ACCUMULATE_CASTS = {
    DataFormat.Float32: None,
    DataFormat.Float16_b: ml_dtypes.bfloat16,
    DataFormat.Float16: np.float16,
}


def accumulate(values: np.ndarray, accumulate_df) -> np.ndarray:
    """Round a float32 result to the accumulation format (float32 returned); a finite sum beyond
    the format's range saturates (formats.quantize), as the device's destination register does."""
    if accumulate_df is DataFormat.Float16_b and type(values) is np.ndarray and values.dtype == np.float32:
        return bfloat16_values(values)      # the default, without parsing
    df = DataFormat.parse(accumulate_df)
    if df not in _ACCUMULATE_CASTS:
        raise ValueError(f"accumulate_df must be one of {[f.name for f in _ACCUMULATE_CASTS]}, got {df.name}")
    values = np.asarray(values, dtype=np.float32)
    return values if _ACCUMULATE_CASTS[df] is None else quantize(values, df)   # saturating, as the formats


def gemm(x, y, out=None):
    """x @ y in float32 through torch (numpy-style broadcasting); with `out`, adds into it.

    torch, not numpy: frameworks around the simulator run torch, and a second BLAS thread pool
    (numpy's OpenBLAS) spinning beside torch's makes both slow on a small machine.
    """
    import torch

    x = x if isinstance(x, torch.Tensor) else torch_view(x)
    y = y if isinstance(y, torch.Tensor) else torch_view(y)
    if x.ndim == y.ndim == 2:                               # the common case first (torch.matmul's mm)
        return torch.mm(x, y) if out is None else out.addmm_(x, y)
    # Accumulating GEMMs add into `out` in BLAS (addmm/baddbmm): a separate add of a fresh product
    # costs a pass over the result and, with torch's thread pool, more than the GEMM itself.
    if y.ndim == 2 and x.ndim > 2 and x.is_contiguous():   # batch dims only on x: one 2-D GEMM
        flat = x.reshape(-1, x.shape[-1])
        if out is None:
            return torch.mm(flat, y).reshape(x.shape[:-1] + (y.shape[-1],))
        out.view(-1, y.shape[-1]).addmm_(flat, y)
        return out
    if x.ndim == y.ndim == 3 and x.shape[0] == y.shape[0]:     # attention: batched GEMMs, without
        return torch.bmm(x, y) if out is None else out.baddbmm_(x, y)   # torch.matmul's checks or views
    if out is None:
        return torch.matmul(x, y)
    if x.ndim == y.ndim and x.shape[:-2] == y.shape[:-2] and out.is_contiguous():
        out.view(-1, *out.shape[-2:]).baddbmm_(x.reshape(-1, *x.shape[-2:]), y.reshape(-1, *y.shape[-2:]))
        return out
    return out.add_(torch.matmul(x, y))
