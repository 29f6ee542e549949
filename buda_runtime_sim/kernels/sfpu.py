"""Unary math on the SFPU (the vector unit): activations and elementwise functions.

Computed on padded storage; where f(0) != 0 the padding is cleared again so it never leaks.
"""

from __future__ import annotations

import numpy as np

from ..bf16_gemm import torch_module
from ..compact_tensor import rounded_compact, unpadded
from ..float_errors import ignored
from ..tensor import Tensor, zero_padding
from .registry import kernel

_ZERO = np.zeros(1, np.float32)


def unary(a: Tensor, fn, numerics, selects: bool = False) -> Tensor:
    """selects: every output value is an input value or zero (relu), so an output format that holds
    the input's format exactly needs no rounding pass."""
    with ignored():
        if unpadded(a):                  # kept compact: compute on its values, keep the result so
            return rounded_compact(fn(a.logical()), numerics.output_df, held_in=a.data_format if selects else None)
        out = np.asarray(fn(a.padded), dtype=np.float32)
        # (a shape without padding needs no f(0) probe: for Gelu that is a second torch call)
        if a.padded.shape != a.shape and not np.all(np.asarray(fn(_ZERO)) == 0):
            out = zero_padding(out if out is not a.padded else out.copy(), a.shape)
    if selects:
        return Tensor.from_padded(out, a.shape, numerics.output_df, held_in=a.data_format)
    return Tensor.from_padded(out, a.shape, numerics.output_df)


def _torch(fn):
    """Run a torch function on a numpy array (torch is imported on first use only)."""

    def run(x):
        torch = torch_module()
        return fn(torch, torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))).numpy()

    return run


def _register(op_type: str, fn) -> None:
    @kernel(op_type)
    def apply(inputs, attrs, numerics):
        return unary(inputs[0], fn, numerics)


SIMPLE_FUNCTIONS = {
    "Sigmoid": _torch(lambda torch, x: torch.sigmoid(x)),
    "Exp": np.exp,
    "Reciprocal": np.reciprocal,
    "Sqrt": np.sqrt,
    "Log": np.log,
    "Abs": np.abs,
    "Tanh": np.tanh,
    "Sin": np.sin,
    "Cos": np.cos,
    "Erf": _torch(lambda torch, x: torch.special.erf(x)),
}

for _op, _fn in SIMPLE_FUNCTIONS.items():
    _register(_op, _fn)


@kernel("Relu")
def relu(inputs, attrs, numerics):
    """mode "min": x where x > threshold, else 0; mode "max": x where x < threshold, else 0."""
    threshold = np.float32(attrs.get("threshold", 0.0))
    if attrs.get("mode", "min") != "min":
        return unary(inputs[0], lambda x: np.where(x < threshold, x, np.float32(0)), numerics, selects=True)
    if threshold == 0:
        # The same bits as np.where(x > 0, x, 0) (NaN -> 0, -0 -> +0: fmax drops NaNs and the added +0
        # makes any zero positive), ten times faster: np.where on signs that change at random stalls.
        return unary(inputs[0], _relu_at_zero, numerics, selects=True)
    return unary(inputs[0], lambda x: np.where(x > threshold, x, np.float32(0)), numerics, selects=True)


def _relu_at_zero(x: np.ndarray) -> np.ndarray:
    out = np.fmax(x, np.float32(0))
    out += np.float32(0)
    return out


@kernel("LeakyRelu")
def leaky_relu(inputs, attrs, numerics):
    alpha = np.float32(attrs["alpha"])
    return unary(inputs[0], lambda x: np.where(x >= 0, x, x * alpha), numerics)


@kernel("Gelu")
def gelu(inputs, attrs, numerics):
    approximate = attrs.get("approximate", "none")
    return unary(inputs[0], _torch(lambda torch, x: torch.nn.functional.gelu(x, approximate=approximate)), numerics)


@kernel("Clip")
def clip(inputs, attrs, numerics):
    low, high = np.float32(attrs["min"]), np.float32(attrs["max"])
    return unary(inputs[0], lambda x: np.clip(x, low, high), numerics)


@kernel("Pow")
def pow_(inputs, attrs, numerics):
    """x ** exponent for a constant exponent."""
    exponent = np.float32(attrs["exponent"])
    return unary(inputs[0], lambda x: np.power(x, exponent), numerics)
