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

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.formats import quantize
from buda_runtime_sim.runtime.flat_values import FlatValues
from buda_runtime_sim.tensor import Tensor, pad

_PER_VALUE = frozenset({DataFormat.Float16_b, DataFormat.Float16, DataFormat.Lf8})


def prefilled_copies(owner: FlatValues, values: dict, previous: dict) -> dict:
    """shared_copies for CompiledModel.update_parameters (id(array) -> (device copies, array)) with
    each weight's copies in the per-value formats its previous value's copies (`previous`, by name)
    had filled in. `values` are `owner`'s views, by name."""
    wanted = {}
    for name in values:
        formats = [key for key in previous.get(name, ()) if type(key) is DataFormat and key in _PER_VALUE]
        if formats:
            wanted[name] = formats
    rounded = {fmt: quantize(owner.buffer, fmt) for fmt in {f for formats in wanted.values() for f in formats}}
    layout = owner.layout
    shared = {}
    for name, formats in wanted.items():
        copies = {}
        for fmt in formats:
            view = layout.view(rounded[fmt], name)
            tensor = Tensor(pad(view), view.shape, fmt)   # = Tensor.from_array(values[name], fmt)
            tensor.padded.flags.writeable = False           # as Parameter.device_tensor leaves it
            copies[fmt] = tensor
        array = values[name]
        shared[id(array)] = (copies, array)
    return shared
