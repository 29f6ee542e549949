"""A device tensor whose tile-padded storage is made only when a kernel reads it.

Data movement (a head split's Reshape to [.., 32, 2, 32], the Transpose after it) and reductions
([.., 32, 1], a bias gradient's [64]) produce shapes far from tile multiples: their padded storage
is up to 32 times the values (a [4, 32, 2, 32] attention split pads to [4, 32, 32, 32], 512 KB of
zeros for 32 KB of values), and the next op often reads only the values again (`logical()`: a
broadcast Subtract, the next Transpose, a program output). Such a result keeps its values and
pads them on the first read of `padded`, which gives what Tensor.from_array/`pad` would have
stored; `logical()` answers from the values without padding. The values are never written after
construction (kernels make new arrays), so storage made later holds exactly what it would have
held when the tensor was created.
"""

from __future__ import annotations

import numpy as np

from .constants import TILE_DIM
from .dataformat import DataFormat
from .formats import holds_exactly, quantize
from .lazy_storage import LazyStorageTensor
from .tensor import Tensor, pad

_FLOAT32 = np.dtype(np.float32)
_FLOAT32_FORMAT = DataFormat.Float32


class CompactTensor(LazyStorageTensor):
    """A Tensor made from its logical float32 `values`; the padded storage is made on first read."""

    __slots__ = ("_values",)

    def __init__(self, values: np.ndarray, data_format, dtype=None):
        self._values = values
        self.shape = values.shape
        self.data_format = data_format
        self.dtype = _FLOAT32 if dtype is None else np.dtype(dtype)
        self._derived = None

    def make_storage(self) -> np.ndarray:
        return pad(self._values)

    def logical(self) -> np.ndarray:
        return self._values

    def derived(self) -> dict | None:
        return super().derived() if self.storage_made else None     # fresh storage is writable: no cache


def compact_or_padded(values: np.ndarray, data_format) -> Tensor:
    """A tensor of float32 `values`: padded now when that adds nothing (a tile-multiple shape),
    else kept compact until its storage is read."""
    shape = values.shape
    if len(shape) >= 2 and shape[-1] % TILE_DIM == 0 and shape[-2] % TILE_DIM == 0:   # storage_shape(shape) == shape
        return Tensor.of(np.ascontiguousarray(values, dtype=np.float32), shape, data_format)   # what pad gives
    return CompactTensor(values, data_format)


def unpadded(t: Tensor) -> bool:
    """Whether `t` is a compact tensor whose storage is not made yet: an elementwise kernel then
    computes on its values (and keeps its own result compact) instead of making that storage."""
    return type(t) is CompactTensor and not t.storage_made


def rounded_compact(values: np.ndarray, data_format, held_in=None) -> Tensor:
    """An elementwise kernel's result computed on logical values, rounded to `data_format` (unless
    held in a format it holds exactly, as Tensor.from_padded decides). Rounding before padding gives
    the storage rounding after would: every format rounds zero to zero, and zeros appended to a
    row never move a block-float block's shared exponent (formats.quantize)."""
    values = np.asarray(values, dtype=np.float32)
    if (held_in is None or not holds_exactly(data_format, held_in)) and data_format != _FLOAT32_FORMAT:
        values = quantize(values, data_format)
    return compact_or_padded(values, data_format)
