"""Tensor manipulations: data movement only, no arithmetic (values keep their format)."""

from __future__ import annotations

import numpy as np

from ..constants import TILE_DIM
from ..tensor import Tensor, pad
from .registry import kernel


def _relayout(a: Tensor, values: np.ndarray) -> Tensor:
    return Tensor(pad(values), values.shape, a.data_format)


@kernel("Transpose")
def transpose(inputs, attrs, numerics):
    a = inputs[0]
    dim0, dim1 = sorted(d % a.ndim for d in (attrs["dim0"], attrs["dim1"]))
    if (dim0, dim1) == (a.ndim - 2, a.ndim - 1):  # a tile transpose: padding moves with the data
        shape = a.shape[:-2] + (a.shape[-1], a.shape[-2])
        return Tensor(np.ascontiguousarray(np.swapaxes(a.padded, -1, -2)), shape, a.data_format)
    return _relayout(a, np.swapaxes(a.logical(), dim0, dim1))


@kernel("Permute")
def permute(inputs, attrs, numerics):
    a = inputs[0]
    return _relayout(a, np.transpose(a.logical(), tuple(attrs["axes"])))


@kernel("Reshape")
def reshape(inputs, attrs, numerics):
    a = inputs[0]
    shape = tuple(int(d) for d in attrs["shape"])
    if a.shape[-1:] == shape[-1:] and a.ndim >= 2 and len(shape) >= 2 and a.shape[-2] % TILE_DIM == 0 and shape[-2] % TILE_DIM == 0:
        # Rows move in whole tiles: reshape the padded storage directly.
        padded = a.padded.reshape(shape[:-1] + (a.padded.shape[-1],))
        return Tensor(padded, shape, a.data_format)
    return _relayout(a, a.logical().reshape(shape))


@kernel("Identity")
def identity(inputs, attrs, numerics):
    a = inputs[0]
    return Tensor(a.padded, a.shape, a.data_format)
