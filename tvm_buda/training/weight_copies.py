"""A training step's new weights rounded to their device formats in one pass, before the programs ask.

A generated module converts a weight to the format an op wants on first use (Parameter.device_tensor:
Tensor.from_array, then kept until the weight changes). The optimizer changes every weight every
step, so each step converted ~40 weights one by one. When the new weights are views of one flat
buffer (flat_values), each format the previous step's programs asked for is rounded once over the
buffer and the device copies are cut from it.

Only per-value formats (bfloat16, float16, e5m2: a cast per value) are rounded flat: a value's
rounding does not depend on its neighbours, so every slot gets the bits Tensor.from_array gives it
alone. Block formats (shared exponents), Float32 (no rounding) and weights an op keeps in another
layout (keyed (format, layout)) are left to the modules, as before.
"""

from __future__ import annotations

import weakref

import numpy as np

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.formats import quantize
from buda_runtime_sim.runtime.flat_values import FlatLayout, FlatValues
from buda_runtime_sim.tensor import Tensor, storage_shape

_PER_VALUE = frozenset({DataFormat.Float16_b, DataFormat.Float16, DataFormat.Lf8})
_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # FlatLayout -> its storage plan


def prefilled_copies(owner: FlatValues, values: dict, previous: dict) -> dict:
    """shared_copies for CompiledModel.update_parameters (id(array) -> (device copies, array)) with
    each weight's copies in the per-value formats its previous value's copies (`previous`, by name)
    had filled in. `values` are `owner`'s views, by name."""
    wanted = {}
    for name in values:
        formats = [key for key in previous.get(name, ()) if type(key) is DataFormat and key in _PER_VALUE]
        if formats:
            wanted[name] = formats
    entries, padded_size = _plan(owner.layout)
    stored = {fmt: _storage(quantize(owner.buffer, fmt), entries, padded_size)
              for fmt in {f for formats in wanted.values() for f in formats}}
    shared = {}
    for name, formats in wanted.items():
        array = values[name]
        shared[id(array)] = ({fmt: Tensor(stored[fmt][name], array.shape, fmt) for fmt in formats}, array)
    return shared


def _storage(rounded: np.ndarray, entries: list, padded_size: int) -> dict:
    """Each weight's tile-padded storage (what tensor.pad makes of its rounded values), read-only as
    Parameter.device_tensor leaves it: a view of `rounded` when its shape needs no padding, else a
    view of one zero-filled buffer shared by the weights that do."""
    padded = np.zeros(padded_size, np.float32)
    for name, offset, size, shape, pad in entries:
        if pad is not None:
            at, end, storage, two_d = pad
            padded[at:end].reshape(storage)[..., :two_d[-2], :two_d[-1]] = rounded[offset:offset + size].reshape(two_d)
    rounded.flags.writeable = False   # (views made from here on are read-only too)
    padded.flags.writeable = False
    out = {}
    for name, offset, size, shape, pad in entries:
        if pad is None:
            out[name] = rounded[offset:offset + size].reshape(shape)
        else:
            at, end, storage, _ = pad
            out[name] = padded[at:end].reshape(storage)
    return out


def _plan(layout: FlatLayout) -> tuple[list, int]:
    """(name, offset, size, shape, None or (start and end in the padded buffer, storage shape, 2-d
    shape)) per weight of `layout`, and the padded buffer's size."""
    plan = _PLANS.get(layout)
    if plan is None:
        entries, at = [], 0
        for name, offset, size, shape in zip(layout.names, layout.offsets, layout.sizes, layout.shapes):
            storage = storage_shape(shape)
            if storage == shape:
                entries.append((name, offset, size, shape, None))
            else:
                two_d = (1,) * max(0, 2 - len(shape)) + shape
                end = at + int(np.prod(storage))
                entries.append((name, offset, size, shape, (at, end, storage, two_d)))
                at = end
        plan = _PLANS[layout] = (entries, at)
    return plan
