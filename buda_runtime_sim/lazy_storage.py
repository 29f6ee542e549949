"""A device tensor whose padded storage is made on the first read of `padded`, by a subclass's
`make_storage()` (widen_on_read.py: from bfloat16 bits; compact_tensor.py: from unpadded values)."""

from __future__ import annotations

import numpy as np

from .tensor import Tensor

_PADDED = Tensor.__dict__["padded"]          # the base class's slot


class LazyStorageTensor(Tensor):
    """Subclasses set the other Tensor fields and define make_storage(); `padded` calls it once."""

    __slots__ = ()

    def make_storage(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def padded(self) -> np.ndarray:
        try:
            return _PADDED.__get__(self, Tensor)
        except AttributeError:               # first read (two threads racing make equal storage)
            storage = self.make_storage()
            _PADDED.__set__(self, storage)
            return storage

    @padded.setter
    def padded(self, value: np.ndarray) -> None:
        _PADDED.__set__(self, value)

    @property
    def storage_made(self) -> bool:
        """Whether the padded storage has been made (something read it)."""
        try:
            _PADDED.__get__(self, Tensor)
        except AttributeError:
            return False
        return True


class StorageOnRead:
    """A lazily stored tensor's storage for a reader that may need only its shape (a matmul whose
    slices are cached): becomes the tensor's float32 storage under np.asarray, made then."""

    __slots__ = ("tensor", "shape")

    def __init__(self, tensor: Tensor, shape: tuple):
        self.tensor = tensor
        self.shape = shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __array__(self, dtype=None, copy=None):
        values = self.tensor.padded
        if copy:
            values = values.copy()
        return values if dtype is None else values.astype(dtype, copy=bool(copy))
