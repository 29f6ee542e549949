"""Reductions along one dimension, and argmax.

They read the logical values only, so padding can never enter a sum, a mean or a max. PyBuda's
reductions keep the reduced dimension (size 1); `keep_dim=False` drops it.
"""

from __future__ import annotations

import numpy as np

from ..dataformat import DataFormat
from ..tensor import Tensor, pad
from .common import axis, result
from .registry import kernel

def _mean(values: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    """np.mean along one axis of a float32 array, by the same ufunc calls np.mean makes (a float32
    sum, then true_divide by the count as np.intp into the sum) without its ~5 us of Python."""
    total = np.add.reduce(values, axis=axis, keepdims=keepdims)
    if not isinstance(total, np.ndarray) or values.dtype != np.float32 or values.shape[axis] == 0:
        return np.mean(values, axis=axis, keepdims=keepdims)     # a 0-d or empty result: numpy's own path
    return np.true_divide(total, np.intp(values.shape[axis]), out=total, casting="unsafe", subok=False)


# The reductions as ufunc reduces (np.sum, np.max and np.min are these behind ~2 us of wrappers).
REDUCTIONS = {"ReduceSum": np.add.reduce, "ReduceAvg": _mean, "ReduceMax": np.maximum.reduce,
              "ReduceMin": np.minimum.reduce}


def _register(op_type: str, fn) -> None:
    @kernel(op_type)
    def reduce(inputs, attrs, numerics):
        a = inputs[0]
        dim = axis(attrs["dim"], max(a.ndim, 1))
        values = a.logical().reshape(a.shape or (1,))
        return result(fn(values, axis=dim, keepdims=bool(attrs.get("keep_dim", True))), numerics)


for _op, _fn in REDUCTIONS.items():
    _register(_op, _fn)


@kernel("Argmax")
def argmax(inputs, attrs, numerics):
    """Index of the first maximum along `dim` (over all values when dim is None).

    Indices are exact integers, so the result is an Int32 tensor whatever the op's output format.
    """
    a = inputs[0]
    values = a.logical()
    keep_dim = bool(attrs.get("keep_dim", True))
    if attrs.get("dim") is None:
        index = np.asarray(np.argmax(values))
        out = index.reshape((1,) * a.ndim) if keep_dim else index
    else:
        dim = axis(attrs["dim"], a.ndim)
        out = np.argmax(values, axis=dim, keepdims=keep_dim)
    return Tensor(pad(out.astype(np.float32)), out.shape, DataFormat.Int32, dtype=np.int32)
