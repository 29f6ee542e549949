"""A weight's bfloat16 fidelity terms, as a first run leaves them, carried in a TTI's device state.

On the bfloat16 GEMM route (bf16_gemm.py) a matmul weight's SrcA slices are cut once and kept in
the weight Tensor's `derived()` dict under ("srca_bf16", phases): one bfloat16 torch tensor of
the phase terms side by side along the inner dim, and the term count (or None: a slice does not
fit bfloat16). Cutting them is most of what a first run does beyond a warm one, so an image
stores them as the compiling process computed them (int16 bit patterns, exact) and `restore`
puts them back, zero-copy views of the image's buffer.

The first term of HiFi2-4 with a bfloat16-valued weight is the weight itself, so when the first
term equals the tensor's stored bits the terms replace those bits and the tensor is widened from
its first term: HiFi2 and HiFi4 terms cost nothing in the image, HiFi3's two one extra copy of the
weight, LoFi's one term (the high slice) a copy beside it. An entry the loading process never
looks up (no bfloat16 route there) is simply unused: the float32 route keeps its own cache key.
"""

from __future__ import annotations

import numpy as np

from ..tensor import storage_shape

_KIND = "srca_bf16"


def captured(tensor) -> list[tuple[tuple, object]]:
    """The (key, value) pairs of `tensor`'s derived cache an image can carry."""
    out = []
    for key, value in (tensor._derived or {}).items():
        if not (isinstance(key, tuple) and len(key) == 2 and key[0] == _KIND and isinstance(key[1], int)):
            continue
        if value is None or (isinstance(value, tuple) and len(value) == 2 and _is_bf16(value[0])
                             and isinstance(value[1], int) and value[0].is_contiguous()):
            out.append((key, value))
    return out


def _is_bf16(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and value.dtype == torch.bfloat16


def capture(entry: str, tensor, stored: np.ndarray, arrays: dict) -> list[dict]:
    """Add `tensor`'s fidelity terms to `arrays` (the image's state arrays); returns their
    metadata. `stored` is the tensor's own array in `arrays[entry]`: when a term set starts with
    exactly those bits, it takes that array's place (see the module docstring)."""
    meta = []
    for (kind, phases), value in captured(tensor):
        if value is None:
            meta.append({"kind": kind, "phases": phases, "array": None})
            continue
        joined, count = value
        bits = joined.view(_torch().int16).numpy()
        rows = bits.shape[-2] // count
        first = bits[..., :rows, :]
        if arrays.get(entry) is stored and stored.dtype == np.int16 and np.array_equal(first, stored):
            arrays[entry], name = bits, entry
        else:
            name = f"{entry}.{kind}.{phases}"
            arrays[name] = bits
        meta.append({"kind": kind, "phases": phases, "array": name, "count": count})
    return meta


def _described(entry: str, info: dict) -> list[dict]:
    terms = info.get("terms", [])
    if not isinstance(terms, list) or not all(isinstance(d, dict) for d in terms):
        raise ValueError(f"device state {entry!r}: fidelity terms must be a list of tables, got {terms!r}")
    return terms


def first_term(entry: str, info: dict, arrays: dict) -> np.ndarray:
    """The tensor's own stored bits: all of `arrays[entry]`, or its first term when terms share it."""
    stored = arrays[entry]
    shared = [d for d in _described(entry, info) if d.get("array") == entry]
    if not shared:
        return stored
    count = _count(entry, shared[0])
    if stored.ndim < 2 or stored.shape[-2] % count:
        raise ValueError(f"device state {entry!r}: {stored.shape} does not hold {count} terms")
    return stored[..., :stored.shape[-2] // count, :]


def restore(entry: str, info: dict, arrays: dict, tensor) -> None:
    """Put the terms `capture` stored for `entry` into `tensor`'s derived cache."""
    torch = _torch()
    for d in _described(entry, info):
        if d.get("kind") != _KIND or not isinstance(d.get("phases"), int) or d["phases"] not in (1, 2, 3, 4):
            raise ValueError(f"device state {entry!r}: unknown fidelity terms {d!r}")
        name = d.get("array")
        if name is None:
            tensor.derived()[(_KIND, d["phases"])] = None
            continue
        if name not in arrays or arrays[name].dtype != np.int16:
            raise ValueError(f"device state {entry!r}: fidelity terms {name!r} are not stored as int16")
        bits, count = arrays[name], _count(entry, d)
        padded = storage_shape(tensor.shape)
        if bits.shape[:-2] + bits.shape[-1:] != padded[:-2] + padded[-1:] or bits.shape[-2] != count * padded[-2]:
            raise ValueError(f"device state {entry!r}: {count} fidelity terms of {padded} cannot be {bits.shape}")
        tensor.derived()[(_KIND, d["phases"])] = (torch.from_numpy(bits).view(torch.bfloat16), count)


def _count(entry: str, d: dict) -> int:
    count = d.get("count")
    if not isinstance(count, int) or not 1 <= count <= 4:
        raise ValueError(f"device state {entry!r}: fidelity term count {count!r}")
    return count


def _torch():
    import torch

    return torch
