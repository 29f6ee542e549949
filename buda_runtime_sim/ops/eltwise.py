"""Elementwise kernels: binary math, FPU and SFPU unary functions."""

from __future__ import annotations

import numpy as np

from ..fidelity import fidelity_multiply
from ..tensor import Tensor, pad, zero_padding
from .registry import kernel


def binary(a: Tensor, b: Tensor, fn, numerics, keeps_zero: bool) -> Tensor:
    """Apply `fn` to two tensors, on padded storage when their layouts allow it.

    keeps_zero: fn(0, 0) == 0, so padding stays zero when both operands share a layout.
    """
    if a.shape == b.shape:
        out = fn(a.padded, b.padded)
        if not keeps_zero:
            zero_padding(out, a.shape)
        return Tensor.from_padded(out, a.shape, numerics.output_df)
    shape = np.broadcast_shapes(a.shape, b.shape)
    if shape == a.shape and a.ndim >= 2 and _is_row(b, a):  # bias row or scalar across a tensor
        out = zero_padding(fn(a.padded, _row(b)), shape)
    elif shape == b.shape and b.ndim >= 2 and _is_row(a, b):
        out = zero_padding(fn(_row(a), b.padded), shape)
    else:
        out = pad(fn(a.logical(), b.logical()))
    return Tensor.from_padded(out, shape, numerics.output_df)


def _is_row(small: Tensor, big: Tensor) -> bool:
    """A scalar, or a vector spanning `big`'s last dim: it broadcasts over padded storage directly."""
    return small.shape in ((), (1,)) or (small.ndim == 1 and small.shape[0] == big.shape[-1])


def _row(t: Tensor) -> np.ndarray:
    return t.padded[0, :1] if t.shape in ((), (1,)) else t.padded[0]


def unary(a: Tensor, fn, numerics) -> Tensor:
    out = np.asarray(fn(a.padded), dtype=np.float32)
    if not np.all(fn(np.zeros(1, np.float32)) == 0):
        zero_padding(out, a.shape)
    return Tensor.from_padded(out, a.shape, numerics.output_df)


@kernel("Add")
def add(inputs, attrs, numerics):
    return binary(inputs[0], inputs[1], np.add, numerics, keeps_zero=True)


@kernel("Subtract")
def subtract(inputs, attrs, numerics):
    return binary(inputs[0], inputs[1], np.subtract, numerics, keeps_zero=True)


@kernel("Multiply")
def multiply(inputs, attrs, numerics):
    def mul(x, y):
        return fidelity_multiply(x, y, numerics.math_fidelity)

    return binary(inputs[0], inputs[1], mul, numerics, keeps_zero=True)


@kernel("Max")
def maximum(inputs, attrs, numerics):
    return binary(inputs[0], inputs[1], np.maximum, numerics, keeps_zero=True)


@kernel("Relu")
def relu(inputs, attrs, numerics):
    threshold = float(attrs.get("threshold", 0.0))
    mode = attrs.get("mode", "min")
    if mode == "min":
        return unary(inputs[0], lambda x: np.where(x > threshold, x, 0.0).astype(np.float32), numerics)
    return unary(inputs[0], lambda x: np.where(x < threshold, x, 0.0).astype(np.float32), numerics)


@kernel("Gelu")
def gelu(inputs, attrs, numerics):
    import torch

    approximate = attrs.get("approximate", "none")

    def fn(x):
        return torch.nn.functional.gelu(torch.from_numpy(np.ascontiguousarray(x)), approximate=approximate).numpy()

    return unary(inputs[0], fn, numerics)
