"""Matrix multiplication on tiles, with fidelity phases and an optional fused bias."""

from __future__ import annotations

import numpy as np

from ..fidelity import fidelity_matmul
from ..tensor import Tensor, pad
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
        product = binary(product, bias, np.add, numerics, keeps_zero=True)
    return product
