"""Matrix multiplication on tiles, with fidelity phases and an optional fused bias."""

from __future__ import annotations

import numpy as np

from .. import fidelity_bf16
from ..compact_tensor import unpadded
from ..dataformat import DataFormat, MathFidelity
from ..fidelity import fidelity_matmul, general_matmul
from ..float_errors import ignored
from ..tensor import Tensor, pad, zero_padding
from .common import OpArgumentError, broadcast_shape
from .eltwise import binary
from .registry import kernel

_BF16 = DataFormat.Float16_b


def matmul_with_fidelity(a: np.ndarray, b: np.ndarray, numerics, a_format=None, b_format=None,
                         b_cache: dict | None = None) -> np.ndarray:
    """a @ b through the matrix unit (a to SrcB, b to SrcA), batch dims broadcast. Formats the
    operands are held in and a cache for `b`'s slices make it cheaper (see fidelity_matmul, whose
    steps these are, its HiFi3 bfloat16 fast path tried here without its frame and parsing)."""
    fidelity, accumulate_df = numerics.math_fidelity, numerics.accumulate_df
    if fidelity is MathFidelity.HiFi3 and fidelity_bf16.applies(a_format, b_format):
        out = fidelity_bf16.matmul(a, b, accumulate_df, b_cache)
        return out if out is not None else general_matmul(a, b, 3, accumulate_df, a_format, b_format, b_cache)
    return fidelity_matmul(a, b, fidelity, accumulate_df, a_format=a_format, b_format=b_format, b_cache=b_cache)


@kernel("Matmul")
def matmul(inputs, attrs, numerics):
    a, b = inputs[0], inputs[1]
    a_shape, b_shape = a.shape, b.shape
    a_ndim, b_ndim = len(a_shape), len(b_shape)
    inner_a = a_shape[-1] if a_ndim else 1
    inner_b = (b_shape[-2] if b_ndim >= 2 else b_shape[0]) if b_ndim else 1
    if a_ndim == 0 or b_ndim == 0 or inner_a != inner_b:
        raise OpArgumentError("operandB", f"of shape {b_shape} cannot multiply operandA of shape {a_shape}")
    matrices = a_ndim >= 2 and b_ndim >= 2
    if matrices:
        # Padding is zero in both inner dims, so the padded product equals the logical one.
        batch = broadcast_shape(a_shape[:-2], b_shape[:-2]) if a_ndim > 2 or b_ndim > 2 else ()
        # b.storage(): a weight the bfloat16 route takes from its cached terms is never widened
        out = matmul_with_fidelity(a.padded, b.storage(), numerics, a.data_format, b.data_format, b.derived())
        shape = batch + (a_shape[-2], b_shape[-1])
    else:
        values = matmul_with_fidelity(a.logical(), b.logical(), numerics, a.data_format, b.data_format)
        shape, out = values.shape, pad(values)
    output_df = numerics.output_df
    product = _rounded(out, shape, output_df, numerics.accumulate_df)
    if len(inputs) == 2:
        return Tensor(product, shape, output_df)
    bias = inputs[2]
    if matrices and not unpadded(bias):
        # The device rounds the product, then adds the bias and rounds again: eltwise.binary's
        # steps for a bias of the product's shape or a bias row, done in place on the product's
        # storage (a new array fidelity_matmul made), without a second dispatch, Tensor and array.
        full = bias.shape == shape
        if full or (len(bias.shape) == 1 and bias.shape[0] == shape[-1]):
            with ignored():
                summed = np.add(product, bias.padded if full else bias.padded[0], out=product)
            return Tensor.from_padded(summed if full else zero_padding(summed, shape), shape, output_df)
    if broadcast_shape(shape, bias.shape, "bias") != shape:
        raise OpArgumentError("bias", f"of shape {bias.shape} does not broadcast to the product's shape {shape}")
    return binary(Tensor(product, shape, output_df), bias, np.add, numerics, keeps_zero=True)


def _rounded(out: np.ndarray, shape: tuple, output_df, accumulate_df) -> np.ndarray:
    """The product's storage in the output format, as Tensor.from_padded(out, shape, output_df,
    held_in=accumulate_df) holds it; the default formats (a Float16_b product of a Float16_b
    accumulation: nothing to round) without its checks and Tensor."""
    if output_df is _BF16 and accumulate_df is _BF16:
        return out
    return Tensor.from_padded(out, shape, output_df, held_in=accumulate_df).padded
