"""The kernel registry: PyBuda op name -> function computing it on padded tensors."""

from __future__ import annotations

from typing import Callable

KERNELS: dict[str, Callable] = {}


def kernel(op_type: str):
    """Register `fn(inputs: list[Tensor], attrs: dict, numerics: OpNumerics) -> Tensor`."""

    def register(fn):
        if op_type in KERNELS:
            raise ValueError(f"kernel for {op_type} registered twice")
        KERNELS[op_type] = fn
        return fn

    return register


def get_kernel(op_type: str) -> Callable:
    try:
        return KERNELS[op_type]
    except KeyError:
        raise NotImplementedError(f"the simulated device has no kernel for op {op_type!r}") from None
