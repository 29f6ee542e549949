"""Kernel results in the default output format (Float16_b) without the general builders' frames.

A training step builds ~150 results this way; Tensor.from_padded and common.result each pass
through 2-4 Python frames (formats.quantize's checks, compact_or_padded, pad) before the two
astype calls that do the rounding. These helpers make those two calls themselves for a float32
array bound for Float16_b, and hand every other case to the general builder, so the stored bits
are the same either way (tests/buda_runtime_sim/test_kernel_rounded.py)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ..dataformat import DataFormat
from ..float_errors import ignored
from ..formats import holds_exactly
from ..compact_tensor import CompactTensor, compact_or_padded
from ..constants import TILE_DIM
from ..tensor import Tensor
from .common import result

_BF16 = DataFormat.Float16_b
_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_FLOAT32 = np.dtype(np.float32)


def padded_result(out: np.ndarray, shape, data_format, held_in=None) -> Tensor:
    """Tensor.from_padded(out, shape, data_format, held_in)."""
    if held_in is None and data_format is _BF16 and type(out) is np.ndarray and out.dtype == _FLOAT32:
        with ignored():        # (formats.quantize's Float16_b path: rounding may overflow to inf)
            return Tensor(out.astype(_BFLOAT16).astype(_FLOAT32), shape, _BF16)
    return Tensor.from_padded(out, shape, data_format, held_in)


def logical_result(values: np.ndarray, numerics, held_in=None) -> Tensor:
    """common.result(values, numerics). For float32 values bound for Float16_b that is rounding,
    then compact_or_padded's choice: a tile-multiple shape (>= 2-D) is padded at once (a C-ordered
    copy, as pad's np.ascontiguousarray makes), any other shape kept compact. `held_in`: every
    value is one of a tensor held in that format (a select): no rounding where the output format
    holds it exactly (formats.holds_exactly, as Tensor.from_padded decides)."""
    if held_in is not None and holds_exactly(numerics.output_df, held_in):
        return compact_or_padded(np.asarray(values, dtype=np.float32), numerics.output_df)
    if numerics.output_df is _BF16 and type(values) is np.ndarray and values.dtype == _FLOAT32:
        shape = values.shape
        with ignored():
            if len(shape) >= 2 and shape[-1] % TILE_DIM == 0 and shape[-2] % TILE_DIM == 0:
                return Tensor(values.astype(_BFLOAT16, order="C").astype(_FLOAT32), shape, _BF16)
            return CompactTensor(values.astype(_BFLOAT16).astype(_FLOAT32), _BF16)
    return result(values, numerics)
