"""How much memory large weights' fidelity slices may keep, process-wide.

A matmul cuts its weight's slices (fidelity.py: the float32 route's weight and low slice, 8 bytes a
value; the bfloat16 route's joined terms, 4) and keeps them in the weight Tensor's derived() cache,
so later calls skip the cutting. For a small weight that is cheap and always done. For a large
weight held as its device bytes (stored_tensor.py, 2 bytes a value for Float16_b) keeping them
would cost 2-4 times the weight itself, so those are kept only while the process-wide total stays
under TVM_BUDA_SLICE_CACHE_MB; past it a weight's slices are cut again on every call (a pass or
two over the weight beside a GEMM that reads it as often) and dropped after. The first weights to
ask keep theirs: a model runs its weights in the same order every time, where a least-recently-
used policy would evict each just before it is needed again.
"""

from __future__ import annotations

import threading

import numpy as np

from .env import SLICE_CACHE_MB

_lock = threading.Lock()
_held = 0           # bytes held by every BudgetedCache alive


def held_bytes() -> int:
    """Bytes of slices kept under the budget now (for tests and benchmarks)."""
    return _held


def would_keep(size: int) -> bool:
    """Whether an entry of `size` bytes would be kept now (a caller that is told no may derive it in
    a form it cannot keep, e.g. overwriting a temporary it owns)."""
    return _held + size <= _limit()


def _limit() -> int:
    return SLICE_CACHE_MB.get_int() << 20


def _nbytes(value) -> int:
    """Bytes an entry keeps alive when it is stored: numpy arrays and torch tensors, alone or in a
    tuple or list (a convolution's per-term kernels; forms it adds to itself later are not counted)."""
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.nbytes
    storage = getattr(value, "untyped_storage", None)        # a torch tensor
    return storage().nbytes() if storage is not None else 0


def _release(size: int) -> None:
    global _held
    with _lock:
        _held -= size


class BudgetedCache(dict):
    """A derived() cache whose entries are kept only while the process-wide budget allows; one
    that is refused is simply absent, and the caller derives it again next time."""

    __slots__ = ("_size",)

    def __init__(self):
        super().__init__()
        self._size = 0

    def __del__(self) -> None:                            # (its owner, the tensor, died)
        _release(self._size)

    def __setitem__(self, key, value) -> None:
        global _held
        size = _nbytes(value)
        with _lock:
            previous = _nbytes(dict.get(self, key))
            if size > previous and _held + size - previous > _limit():
                return
            _held += size - previous
            self._size += size - previous
        dict.__setitem__(self, key, value)

    def update(self, *args, **kwargs) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value
