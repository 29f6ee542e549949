"""Matrix multiplication on tiles, with fidelity phases and an optional fused bias."""

from __future__ import annotations

import numpy as np

from ..compact_tensor import unpadded
from ..fidelity import fidelity_matmul
from ..float_errors import ignored
from ..tensor import Tensor, pad, zero_padding
from .common import OpArgumentError, broadcast_shape
from .eltwise import binary
from .registry import kernel


def matmul_with_fidelity(a: np.ndarray, b: np.ndarray, numerics, a_format=None, b_format=None,
                         b_cache: dict | None = None) -> np.ndarray:
    """a @ b through the matrix unit (a to SrcB, b to SrcA), batch dims broadcast. Formats the
    operands are held in and a cache for `b`'s slices make it cheaper (see fidelity_matmul)."""
    return fidelity_matmul(a, b, numerics.math_fidelity, numerics.accumulate_df,
                           a_format=a_format, b_format=b_format, b_cache=b_cache)


@kernel("Matmul")
def matmul(inputs, attrs, numerics):
    a, b = inputs[0], inputs[1]
    inner_a = a.shape[-1] if a.ndim else 1
    inner_b = (b.shape[-2] if b.ndim >= 2 else b.shape[0]) if b.ndim else 1
    if a.ndim == 0 or b.ndim == 0 or inner_a != inner_b:
        raise OpArgumentError("operandB", f"of shape {b.shape} cannot multiply operandA of shape {a.shape}")
    if a.ndim >= 2 and b.ndim >= 2:
        # Padding is zero in both inner dims, so the padded product equals the logical one.
        batch = broadcast_shape(a.shape[:-2], b.shape[:-2])
        # b.storage(): a weight the bfloat16 route takes from its cached terms is never widened
        out = matmul_with_fidelity(a.padded, b.storage(), numerics, a.data_format, b.data_format, b.derived())
        shape = batch + (a.shape[-2], b.shape[-1])
    else:
        values = matmul_with_fidelity(a.logical(), b.logical(), numerics, a.data_format, b.data_format)
        shape, out = values.shape, pad(values)
    product = Tensor.from_padded(out, shape, numerics.output_df, held_in=numerics.accumulate_df)
    if len(inputs) > 2:
        bias = inputs[2]
        if broadcast_shape(shape, bias.shape, "bias") != shape:
            raise OpArgumentError("bias", f"of shape {bias.shape} does not broadcast to the product's shape {shape}")
        if not (a.ndim >= 2 and b.ndim >= 2 and _adds_row(product, bias)):
            return binary(product, bias, np.add, numerics, keeps_zero=True)
        # The device rounds the product, then adds the bias and rounds again: binary()'s steps on
        # a bias row, done in place on the product's storage (a new array fidelity_matmul made).
        with ignored():
            summed = np.add(product.padded, bias.padded[0], out=product.padded)
        product = Tensor.from_padded(zero_padding(summed, shape), shape, numerics.output_df)
    return product


def _adds_row(product: Tensor, bias: Tensor) -> bool:
    """Whether the bias is a row spanning the product's last dim, held padded (as eltwise.binary
    adds it on padded storage)."""
    return bias.ndim == 1 and bias.shape[0] == product.shape[-1] and product.ndim >= 2 and not unpadded(bias)
