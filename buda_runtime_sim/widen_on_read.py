"""A device tensor kept as bfloat16 bit patterns until something reads its float32 storage.

A device image stores weights whose values are bfloat16 (their Float16_b device copies, the
transposed weights a first run computes) as 16-bit patterns (runtime/image_state.py). A loaded
model's matmuls on the bfloat16 GEMM route read only the fidelity terms cached beside such a
weight (runtime/image_terms.py), never its float32 storage, so widening every weight when the
image loads wrote memory nothing read: 355 MB for BERT-base, 0.14 s of its load. Here the
widening waits for the first reader of `padded` (any kernel off that route), and the widened
array is then kept like any tensor's storage.
"""

from __future__ import annotations

import numpy as np

from .host_buffers import empty_bytes
from .lazy_storage import LazyStorageTensor, StorageOnRead


def widen(bits: np.ndarray) -> np.ndarray:
    """float32 values from bfloat16 bit patterns (int16 or uint16), in one pass."""
    wide = empty_bytes(bits.size * 4).view(np.uint32).reshape(bits.shape)
    np.left_shift(bits.view(np.uint16), np.uint32(16), out=wide, dtype=np.uint32)
    return wide.view(np.float32)


class WidenOnReadTensor(LazyStorageTensor):
    """A read-only Tensor holding `bits`, the bfloat16 patterns of its padded storage."""

    __slots__ = ("_bits",)

    def __init__(self, bits: np.ndarray, shape, data_format, dtype=None):
        if bits.dtype not in (np.int16, np.uint16):
            raise TypeError(f"bfloat16 bit patterns are 16-bit integers, got {bits.dtype}")
        self._bits = bits
        self.shape = tuple(map(int, shape))
        self.data_format = data_format
        self.dtype = np.dtype(np.float32 if dtype is None else dtype)
        self._derived = {}                   # never written: the derived cache is always valid

    def make_storage(self) -> np.ndarray:
        wide = widen(self._bits)
        wide.flags.writeable = False
        return wide

    def derived(self) -> dict:
        return self._derived

    def storage(self):
        return self.padded if self.storage_made else StorageOnRead(self, self._bits.shape)
