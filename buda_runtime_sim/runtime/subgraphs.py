"""Which placed module a device runs: all of them in placement order, or one chosen with
`set_active_subgraph` (e.g. a prefill or a decode program placed side by side for generation)."""

from __future__ import annotations


def set_active_subgraph(device, index: int) -> None:
    if not isinstance(index, int) or not 0 <= index < len(device.modules):
        raise ValueError(f"{device.name}: set_active_subgraph({index!r}): the device holds {len(device.modules)} "
                         f"module(s) {[m.name for m in device.modules]}; pass an index below that")
    device._active_subgraph = index


def get_active_subgraph(device) -> int | None:
    return getattr(device, "_active_subgraph", None)


def active_modules(device) -> list:
    """The modules a run executes: the active subgraph's alone once one is set, else all in order."""
    index = get_active_subgraph(device)
    return list(device.modules) if index is None else [device.modules[index]]
