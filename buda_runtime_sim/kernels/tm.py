"""Tensor manipulations that move data without arithmetic (values keep their format): transpose,
permute, reshape, squeeze/unsqueeze, broadcast, identity; plus Cast and Constant, which only
choose a format or create values."""

from __future__ import annotations

import math

import numpy as np

from ..constants import TILE_DIM
from ..dataformat import DataFormat
from ..stored_tensor import StoredTensor
from ..tensor import Tensor, plain_ints
from .common import OpArgumentError, axis, moved, result
from .registry import kernel

# Device formats that a Relax/numpy float dtype rounds to when cast on the device.
CAST_FORMATS = {"float16": DataFormat.Float16, "bfloat16": DataFormat.Float16_b}


@kernel("Transpose")
def transpose(inputs, attrs, numerics):
    a = inputs[0]
    ndim, dim0, dim1 = len(a.shape), attrs["dim0"], attrs["dim1"]
    if type(dim0) is int and type(dim1) is int and -ndim <= dim0 < ndim and -ndim <= dim1 < ndim:
        dim0, dim1 = sorted((dim0 % ndim, dim1 % ndim))   # what axis() gives, without its frames
    else:
        dim0, dim1 = sorted(axis(attrs[name], ndim, name) for name in ("dim0", "dim1"))
    if type(a) is StoredTensor:      # a weight held as its device bytes: the same bytes, dims swapped
        return a.swapped(dim0, dim1)
    if dim0 == ndim - 2 and dim1 == ndim - 1:  # a tile transpose: padding moves with the data
        shape = a.shape[:-2] + (a.shape[-1], a.shape[-2])
        padded = a.padded
        swapped = np.swapaxes(padded, -1, -2)
        # An activation's transpose is a view, not a copy: its readers (mostly a weight gradient's
        # matmul, which joins or slices its operands anyway) read it strided, and storage is never
        # written in place. A weight's (read-only, computed once) is laid out afresh, as the slices
        # the matmul caches from it and device images store must be.
        return Tensor.of(swapped if padded.flags.writeable else np.ascontiguousarray(swapped), shape, a.data_format)
    return moved(a, np.swapaxes(a.logical(), dim0, dim1))


@kernel("Permute")
def permute(inputs, attrs, numerics):
    a = inputs[0]
    axes = tuple(int(d) for d in attrs["axes"])
    if sorted(d % max(a.ndim, 1) for d in axes) != list(range(a.ndim)):
        raise OpArgumentError("axes", f"must be a permutation of the {a.ndim} dims, got {axes}")
    return moved(a, np.transpose(a.logical(), axes))


@kernel("Reshape")
def reshape(inputs, attrs, numerics):
    a = inputs[0]
    shape = attrs["shape"]
    if type(shape) is not tuple or not plain_ints(shape):
        shape = tuple(int(d) for d in shape)
    values = None
    if not (shape and min(shape) > 0 and math.prod(shape) == math.prod(a.shape)):   # else numpy takes it as it is
        try:
            values = a.logical().reshape(shape)
        except ValueError:
            raise OpArgumentError("shape", f"{shape} does not hold the {int(np.prod(a.shape))} values of {a.shape}") from None
        shape = values.shape  # resolves -1
    rows_in_tiles = len(a.shape) >= 2 and len(shape) >= 2 and a.shape[-2] % TILE_DIM == 0 and shape[-2] % TILE_DIM == 0
    if rows_in_tiles and a.shape[-1] == shape[-1]:  # rows move in whole tiles: reshape the storage
        padded = a.padded
        return Tensor.of(padded.reshape(shape[:-1] + (padded.shape[-1],)), shape, a.data_format)
    return moved(a, a.logical().reshape(shape) if values is None else values)


@kernel("Squeeze")
def squeeze(inputs, attrs, numerics):
    a = inputs[0]
    dim = axis(attrs["dim"], a.ndim)
    if a.shape[dim] != 1:
        raise OpArgumentError("dim", f"{attrs['dim']} has size {a.shape[dim]}, only a size-1 dim can be squeezed")
    return moved(a, np.squeeze(a.logical(), axis=dim))


@kernel("Unsqueeze")
def unsqueeze(inputs, attrs, numerics):
    a = inputs[0]
    return moved(a, np.expand_dims(a.logical(), axis(attrs["dim"], a.ndim + 1)))


@kernel("Identity")
def identity(inputs, attrs, numerics):
    a = inputs[0]
    if attrs.get("unsqueeze") is not None:
        return unsqueeze([a], {"dim": attrs["unsqueeze_dim"]}, numerics)
    return Tensor(a.padded, a.shape, a.data_format, a.dtype)


@kernel("Buffer")
def buffer(inputs, attrs, numerics):
    a = inputs[0]
    return Tensor(a.padded, a.shape, a.data_format, a.dtype)


@kernel("BroadcastTo")
def broadcast_to(inputs, attrs, numerics):
    a = inputs[0]
    shape = tuple(int(d) for d in attrs["shape"])
    try:
        values = np.broadcast_to(a.logical(), shape)
    except ValueError:
        raise OpArgumentError("shape", f"{shape} is not a broadcast of {a.shape}") from None
    return moved(a, values)


@kernel("Broadcast")
def broadcast(inputs, attrs, numerics):
    """PyBuda's Broadcast: repeat a size-1 dim `dim` to `shape` (an int)."""
    a = inputs[0]
    dim = axis(attrs["dim"], a.ndim)
    if a.shape[dim] != 1:
        raise OpArgumentError("dim", f"{attrs['dim']} has size {a.shape[dim]}; only a size-1 dim broadcasts")
    target = list(a.shape)
    target[dim] = int(attrs["shape"])
    return moved(a, np.broadcast_to(a.logical(), tuple(target)))


@kernel("Cast")
def cast(inputs, attrs, numerics):
    """Round to the format a dtype names (float16 -> Float16, bfloat16 -> Float16_b); "bool" gives
    0/1; "float32" keeps the values as they are."""
    a = inputs[0]
    dtype = attrs["dtype"]
    if dtype == "bool":
        out = result(a.logical() != 0, numerics)
        return Tensor(out.padded, out.shape, out.data_format, np.bool_)
    if dtype == "float32":
        return Tensor(a.padded, a.shape, a.data_format)
    return Tensor.from_padded(a.padded, a.shape, CAST_FORMATS[dtype])


@kernel("Constant")
def constant(inputs, attrs, numerics):
    """A tensor filled with one value: shape (1, 1) unless `shape` is given (an extension)."""
    shape = tuple(int(d) for d in attrs.get("shape") or (1, 1))
    return result(np.full(shape, np.float32(attrs["constant"])), numerics)
