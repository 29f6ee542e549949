"""Slicing and stacking: Index, Select, HSlice/HStack/VSlice/VStack, Pad, Concatenate, BinaryStack.

PyBuda views a tensor as [W, Z, R, C]: HSlice/VSlice cut C/R into pieces that go to Z, and
HStack/VStack put Z slices back side by side (C) or on top of each other (R).
"""

from __future__ import annotations

import numpy as np

from .common import OpArgumentError, axis, moved, result
from .registry import kernel


@kernel("Index")
def index(inputs, attrs, numerics):
    """values[start:stop:stride] along `dim` (Python slice semantics)."""
    a = inputs[0]
    dim = axis(attrs["dim"], a.ndim)
    selector = [slice(None)] * a.ndim
    selector[dim] = slice(attrs["start"], attrs.get("stop"), attrs.get("stride", 1))
    return moved(a, a.logical()[tuple(selector)])


@kernel("Select")
def select(inputs, attrs, numerics):
    """Keep `length` elements from `start` along `dim`, and again every `stride` elements."""
    a = inputs[0]
    dim = axis(attrs["dim"], a.ndim)
    start, length = attrs["index"]
    stride = int(attrs.get("stride", 0)) or a.shape[dim]
    if not 0 <= start < a.shape[dim] or length < 1 or start + length > a.shape[dim]:
        raise OpArgumentError("index", f"({start}, {length}) is out of range for dim {dim} of size {a.shape[dim]}")
    if length > stride:
        raise OpArgumentError("stride", f"{stride} is shorter than the selected length {length}")
    offsets = np.arange(start, a.shape[dim], stride)
    offsets = offsets[offsets + length <= a.shape[dim]]
    positions = (offsets[:, None] + np.arange(length)[None, :]).reshape(-1)
    return moved(a, np.take(a.logical(), positions, axis=dim))


def _as_wzrc(a):
    """The logical values with at least a Z dim in front of R, C."""
    values = a.logical()
    return values.reshape((1,) * max(0, 3 - values.ndim) + values.shape)


def _slices(a, attrs, source_dim: int, *, stacking: bool) -> int:
    values_shape = _as_wzrc(a).shape
    slices = int(attrs.get("slices", -1))
    if stacking and slices == -1:
        slices = values_shape[-3]
    size = values_shape[-3] if stacking else values_shape[source_dim]
    if slices < 1 or size % slices:
        what = "Z" if stacking else ("C" if source_dim == -1 else "R")
        raise OpArgumentError("slices", f"{slices} does not divide {what} = {size} of shape {a.shape}")
    return slices


@kernel("HSlice")
def hslice(inputs, attrs, numerics):
    a = inputs[0]
    n = _slices(a, attrs, -1, stacking=False)
    x = _as_wzrc(a)
    *lead, z, r, c = x.shape
    out = x.reshape(*lead, z, r, n, c // n).swapaxes(-3, -2).reshape(*lead, z * n, r, c // n)
    return moved(a, out)


@kernel("HStack")
def hstack(inputs, attrs, numerics):
    a = inputs[0]
    n = _slices(a, attrs, -1, stacking=True)
    x = _as_wzrc(a)
    *lead, z, r, c = x.shape
    out = x.reshape(*lead, z // n, n, r, c).swapaxes(-3, -2).reshape(*lead, z // n, r, n * c)
    return moved(a, out)


@kernel("VSlice")
def vslice(inputs, attrs, numerics):
    a = inputs[0]
    n = _slices(a, attrs, -2, stacking=False)
    x = _as_wzrc(a)
    *lead, z, r, c = x.shape
    return moved(a, x.reshape(*lead, z * n, r // n, c))


@kernel("VStack")
def vstack(inputs, attrs, numerics):
    a = inputs[0]
    n = _slices(a, attrs, -2, stacking=True)
    x = _as_wzrc(a)
    *lead, z, r, c = x.shape
    return moved(a, x.reshape(*lead, z // n, n * r, c))


PAD_MODES = {"constant": "constant", "replicate": "edge", "reflect": "reflect"}


@kernel("Pad")
def pad(inputs, attrs, numerics):
    """pad = (left, right) or (left, right, top, bottom) on the last two dims (W and H of NHWC with
    channel_last); `value` (an extension) fills constant padding."""
    a = inputs[0]
    widths = [int(p) for p in attrs["pad"]]
    last = a.ndim - (2 if attrs.get("channel_last", False) else 1)
    if last - (len(widths) // 2 - 1) < 0:
        raise OpArgumentError("pad", f"{tuple(widths)} pads more dims than the operand of shape {a.shape} has")
    spec = [(0, 0)] * a.ndim
    spec[last] = (widths[0], widths[1])
    if len(widths) == 4:
        spec[last - 1] = (widths[2], widths[3])
    mode = attrs.get("mode", "constant")
    extra = {"constant_values": np.float32(attrs.get("value", 0.0))} if mode == "constant" else {}
    return result(np.pad(a.logical(), spec, mode=PAD_MODES[mode], **extra), numerics)


@kernel("Concatenate")
def concatenate(inputs, attrs, numerics):
    first = inputs[0]
    dim = axis(attrs["axis"], first.ndim, "axis")
    shapes = [t.shape for t in inputs]
    if any(len(s) != first.ndim or s[:dim] + s[dim + 1:] != first.shape[:dim] + first.shape[dim + 1:] for s in shapes):
        raise OpArgumentError("operands", f"shapes {shapes} differ outside axis {attrs['axis']}")
    values = np.concatenate([t.logical() for t in inputs], axis=dim)
    if all(t.data_format == first.data_format for t in inputs):
        return moved(first, values)
    return result(values, numerics)


@kernel("BinaryStack")
def binary_stack(inputs, attrs, numerics):
    """Interleave a and b along `dim`: out[..., 2i] = a[..., i], out[..., 2i + 1] = b[..., i]."""
    a, b = inputs
    if a.shape != b.shape:
        raise OpArgumentError("operandB", f"of shape {b.shape} must match operandA's shape {a.shape}")
    dim = axis(attrs["dim"], a.ndim)
    stacked = np.stack([a.logical(), b.logical()], axis=dim + 1)
    shape = list(a.shape)
    shape[dim] *= 2
    return result(stacked.reshape(shape), numerics)
