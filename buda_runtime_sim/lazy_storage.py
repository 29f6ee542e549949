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
