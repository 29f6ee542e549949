"""Floating-point warnings in simulator arithmetic.

inf and NaN are values the device produces (overflow to inf, 0 / 0, a NaN rounded to a format),
not errors, so kernels and format codecs compute with numpy's divide, invalid and overflow
warnings off. `np.errstate` costs ~1.5 us per use, as much as the arithmetic of a small op, and
a training step of a small BERT uses it ~700 times; `ignored()` sets numpy's state for the
outermost block of a thread only, so blocks nested in it (every kernel of a device program,
which enters one block around the whole program) cost a counter update.
"""

from __future__ import annotations

import threading

import numpy as np

_local = threading.local()


class _Ignored:
    """Re-entrant and shared: numpy's error state is per thread, and so is the depth kept here."""

    __slots__ = ()

    def __enter__(self):
        depth = getattr(_local, "depth", 0)
        if depth == 0:
            state = np.errstate(divide="ignore", invalid="ignore", over="ignore")
            state.__enter__()
            _local.state = state
        _local.depth = depth + 1
        return self

    def __exit__(self, *exc_info):
        depth = _local.depth - 1
        _local.depth = depth
        if depth == 0:
            state, _local.state = _local.state, None
            state.__exit__(*exc_info)
        return False


_IGNORED = _Ignored()


def ignored() -> _Ignored:
    """`with ignored():` numpy's divide, invalid and overflow warnings are off inside the block."""
    return _IGNORED
