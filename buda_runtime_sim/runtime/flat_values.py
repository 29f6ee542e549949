"""Many parameters' values in one float32 buffer, so per-step work runs once for all of them.

A training step updates ~40 weights; doing each update (and each weight's rounding to its device
format) in its own numpy calls costs more in Python and call overhead than in arithmetic. A
FlatValues holds the values of a fixed list of parameters in one buffer, each a view of its slot:
elementwise work on the buffer gives, slot by slot, the bits the same work on each view gives.

Slots start on 64-byte boundaries (the gaps between them hold zeros), so every view of a buffer
allocated by `aligned_empty` is itself DLPack-aligned: TVM takes such a weight without a copy.

`flat_of(values, layout)` recognises a dict whose entries are still exactly the views one
FlatValues handed out (the same objects, their dtype, shape and strides not set in place: whoever
holds a view reads and writes that buffer's memory, so reading the buffer reads what reading each
view would).
"""

from __future__ import annotations

import weakref

import numpy as np

ALIGNMENT = 64                     # bytes: DLPack's alignment, which TVM needs to share memory
_SLOT = ALIGNMENT // 4             # float32 elements per alignment step

# id(buffer) -> the FlatValues that owns it (the FlatValues keeps the buffer alive, so the id is
# its own while the entry exists; the entry goes when the FlatValues does)
_OWNERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def aligned_empty(size: int, dtype=np.float32) -> np.ndarray:
    """An uninitialised 1-d array whose data starts on an ALIGNMENT-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(size * itemsize + ALIGNMENT, np.uint8)
    offset = -raw.ctypes.data % ALIGNMENT
    return raw[offset:offset + size * itemsize].view(dtype)


class FlatLayout:
    """Where each named parameter lives in a flat buffer: names, shapes, slot offsets, total size."""

    def __init__(self, names, shapes):
        self.names = tuple(names)
        self.shapes = tuple(tuple(int(d) for d in s) for s in shapes)
        self.sizes = tuple(int(np.prod(s, dtype=np.int64)) for s in self.shapes)
        offsets, at = [], 0
        for size in self.sizes:
            offsets.append(at)
            at += -(-size // _SLOT) * _SLOT
        self.offsets = tuple(offsets)
        self.total = at
        self.index = {name: i for i, name in enumerate(self.names)}
        self.key = (self.names, self.shapes)
        self._fillers = None   # zero arrays for the gaps, made on first gather

    def matches(self, names, shapes) -> bool:
        return self.names == tuple(names) and self.shapes == tuple(tuple(s) for s in shapes)

    def same_as(self, other: "FlatLayout") -> bool:
        return other is self or other.key == self.key

    def view(self, buffer: np.ndarray, name: str) -> np.ndarray:
        """`name`'s slot of `buffer` (any array of this layout's total size), in its shape."""
        i = self.index[name]
        return buffer[self.offsets[i]:self.offsets[i] + self.sizes[i]].reshape(self.shapes[i])

    def views(self, buffer: np.ndarray) -> dict[str, np.ndarray]:
        return {name: buffer[at:at + size].reshape(shape)
                for name, at, size, shape in zip(self.names, self.offsets, self.sizes, self.shapes)}

    def gather(self, values: dict) -> np.ndarray:
        """A new aligned buffer holding `values` (float32, each of its slot's shape) in their slots,
        zeros between them: one concatenate of the values and zero gaps into the buffer."""
        if self._fillers is None:
            gaps, at = [], 0
            for offset, size in zip(self.offsets, self.sizes):
                gaps.append(np.zeros(offset - at, np.float32))
                at = offset + size
            self._fillers = (gaps, np.zeros(self.total - at, np.float32))
        gaps, tail = self._fillers
        parts = []
        for name, shape, gap in zip(self.names, self.shapes, gaps):
            value = values[name]
            if type(value) is not np.ndarray or value.dtype != np.float32:
                value = np.asarray(value, np.float32)
            if value.shape != shape:
                raise ValueError(f"{name} has shape {value.shape}, its slot {shape}")
            parts.append(gap)
            parts.append(value.ravel())
        parts.append(tail)
        return np.concatenate(parts, out=aligned_empty(self.total))


class FlatValues:
    """A buffer laid out by a FlatLayout and the per-parameter views of it (handed out as values)."""

    __slots__ = ("layout", "buffer", "views", "aligned", "__weakref__")

    def __init__(self, layout: FlatLayout, buffer: np.ndarray):
        if buffer.shape != (layout.total,) or buffer.dtype != np.float32:
            raise ValueError(f"a flat buffer for this layout is float32 of shape ({layout.total},), got "
                             f"{buffer.dtype} {buffer.shape}")
        self.layout = layout
        self.buffer = buffer
        self.views = layout.views(buffer)
        self.aligned = buffer.ctypes.data % ALIGNMENT == 0   # then so is every view (slots are aligned)
        base = buffer if buffer.base is None else buffer.base
        _OWNERS[id(buffer)] = self
        _OWNERS[id(base)] = self


def owner_of(values: dict) -> FlatValues | None:
    """The live FlatValues whose views are every one of `values` (the same objects, under their own
    names; a subset of its names is fine), else None."""
    if not values:
        return None
    base = getattr(next(iter(values.values())), "base", None)
    owner = _OWNERS.get(id(base)) if base is not None else None
    if owner is None:
        return None
    views, index, shapes = owner.views, owner.layout.index, owner.layout.shapes
    for name, value in values.items():
        if views.get(name) is not value or not _unchanged(value, shapes[index[name]]):
            return None
    return owner


def flat_of(values: dict, layout: FlatLayout) -> np.ndarray | None:
    """The flat buffer behind `values` when every one of `layout`'s names maps to the very view a
    FlatValues of this layout handed out; else None."""
    names = layout.names
    first = values.get(names[0]) if names else None
    base = getattr(first, "base", None)
    if base is None:
        return None
    owner = _OWNERS.get(id(base))
    if owner is None or not owner.layout.same_as(layout):
        return None
    views = owner.views
    for name, shape in zip(names, layout.shapes):
        value = values.get(name)
        if value is not views[name] or not _unchanged(value, shape):
            return None
    return owner.buffer


def _unchanged(view: np.ndarray, shape: tuple) -> bool:
    """The view still reads its slot as made (its dtype, shape or strides were not set in place)."""
    return view.dtype == np.float32 and view.shape == shape and view.flags.c_contiguous
