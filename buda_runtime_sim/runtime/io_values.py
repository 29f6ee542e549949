"""How values cross between the host and a device: a pushed input split into positional and named
values, device tensors handed to the host as framework tensors, and outputs as a tuple."""

from __future__ import annotations

from collections.abc import Mapping

from ..tensor import Tensor


def split_inputs(inputs) -> tuple[tuple, dict]:
    """(positional values, named values) of one pushed input: a Mapping is all named."""
    if isinstance(inputs, Mapping):
        return (), dict(inputs)
    return tuple(inputs), {}


def as_tuple(outputs) -> tuple:
    if isinstance(outputs, Mapping):
        return tuple(outputs.values())
    return tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)


def host_values(values) -> tuple:
    """Device tensors become torch tensors when they cross to the host."""
    return tuple(v.value() if isinstance(v, Tensor) else v for v in values)
