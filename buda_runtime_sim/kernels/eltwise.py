"""Elementwise binary math on the FPU: add, subtract, multiply (with fidelity), divide, max, min,
power and heaviside, with numpy broadcasting."""

from __future__ import annotations

import numpy as np

from .. import fidelity_bf16
from ..compact_tensor import rounded_compact, unpadded
from ..dataformat import DataFormat, MathFidelity
from ..fidelity import fidelity_multiply
from ..float_errors import ignored
from ..tensor import Tensor, pad, zero_padding
from .common import broadcast_shape
from .registry import kernel

_BF16 = DataFormat.Float16_b


def binary(a: Tensor, b: Tensor, fn, numerics, keeps_zero: bool, held_in=None) -> Tensor:
    """Apply `fn` to two tensors, on padded storage when their layouts allow it.

    keeps_zero: fn(0, 0) == 0, so padding stays zero when both operands share a layout.
    held_in: a format holding every value fn gives (Tensor.from_padded's `held_in`).
    """
    with ignored():
        if unpadded(a) or unpadded(b):   # an operand kept compact: compute on values, keep the result so
            return rounded_compact(fn(a.logical(), b.logical()), numerics.output_df, held_in)
        if a.shape == b.shape:
            out = np.asarray(fn(a.padded, b.padded), dtype=np.float32)
            if not keeps_zero:
                zero_padding(out, a.shape)
            return Tensor.from_padded(out, a.shape, numerics.output_df, held_in)
        # a bias row or scalar across a tensor broadcasts to that tensor's shape (no np.broadcast_shapes)
        if a.ndim >= 2 and _is_row(b, a):
            shape = a.shape
            out = zero_padding(np.asarray(fn(a.padded, _row(b)), dtype=np.float32), shape)
        elif b.ndim >= 2 and _is_row(a, b):
            shape = b.shape
            out = zero_padding(np.asarray(fn(_row(a), b.padded), dtype=np.float32), shape)
        else:
            shape = broadcast_shape(a.shape, b.shape)
            out = pad(fn(a.logical(), b.logical()))
    return Tensor.from_padded(out, shape, numerics.output_df, held_in)


def _is_row(small: Tensor, big: Tensor) -> bool:
    """A scalar, or a vector spanning `big`'s last dim: it broadcasts over padded storage directly."""
    return small.shape in ((), (1,)) or (small.ndim == 1 and small.shape[0] == big.shape[-1])


def _row(t: Tensor) -> np.ndarray:
    return t.padded[0, :1] if t.shape in ((), (1,)) else t.padded[0]


def multiply_with_fidelity(x: np.ndarray, y: np.ndarray, numerics, x_format=None, y_format=None) -> np.ndarray:
    """The FPU multiply: operands split into fidelity phases (see fidelity.py). Formats the
    operands are known to be held in let the split skip masks that cannot change them.

    The operands go in unbroadcast (fidelity_multiply broadcasts them as np.multiply does): a
    scalar or a bias row is sliced once, not once per element of the other operand."""
    return fidelity_multiply(np.asarray(x, np.float32), np.asarray(y, np.float32), numerics.math_fidelity,
                             a_format=x_format, b_format=y_format)


def _hifi3_bf16(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """multiply_with_fidelity for HiFi3 on two Float16_b operands' float32 arrays (what
    fidelity_multiply runs for them, without its frames): fidelity_bf16's path, the general one
    for a result that is not all finite."""
    out = fidelity_bf16.multiply(x, y)
    if out is None:
        out = fidelity_multiply(x, y, MathFidelity.HiFi3, a_format=_BF16, b_format=_BF16)
    return out


@kernel("Multiply")
def multiply(inputs, attrs, numerics):
    a, b = inputs[0], inputs[1]
    if numerics.math_fidelity is MathFidelity.HiFi3 and a.data_format is _BF16 and b.data_format is _BF16:
        return binary(a, b, _hifi3_bf16, numerics, keeps_zero=True)
    return binary(a, b, lambda x, y: multiply_with_fidelity(x, y, numerics, a.data_format, b.data_format),
                  numerics, keeps_zero=True)


@kernel("Divide")
def divide(inputs, attrs, numerics):
    """a / b as the hardware does it: a times the SFPU reciprocal of b."""

    def fn(x, y):
        return multiply_with_fidelity(x, np.reciprocal(np.asarray(y, np.float32)), numerics, inputs[0].data_format)

    return binary(inputs[0], inputs[1], fn, numerics, keeps_zero=False)


# Binary ops that are one numpy function: op -> (function, f(0, 0) == 0 so padding stays zero).
# Power: 0 ** 0 == 1; Heaviside: 0 where a < 0, b where a == 0, 1 where a > 0 (torch.heaviside).
_PLAIN_BINARY = {
    "Add": (np.add, True), "Subtract": (np.subtract, True), "Max": (np.maximum, True),
    "Min": (np.minimum, True), "Power": (np.power, False), "Heaviside": (np.heaviside, True),
}
for _op, (_fn, _keeps_zero) in _PLAIN_BINARY.items():
    kernel(_op)(lambda inputs, attrs, numerics, fn=_fn, keeps_zero=_keeps_zero:
                binary(inputs[0], inputs[1], fn, numerics, keeps_zero=keeps_zero))
