"""Matrix multiplication on tiles, with fidelity phases and an optional fused bias."""

from __future__ import annotations

import numpy as np

from ..fidelity import fidelity_matmul
from ..tensor import Tensor, pad
from .eltwise import binary
from .registry import kernel


@kernel("Matmul")
def matmul(inputs, attrs, numerics):
    a, b = inputs[0], inputs[1]
    if a.ndim >= 2 and b.ndim >= 2:
        # Padding is zero in both inner dims, so the padded product equals the logical one.
        out = fidelity_matmul(a.padded, b.padded, numerics.math_fidelity, numerics.accumulate_df)
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    else:
        result = fidelity_matmul(a.logical(), b.logical(), numerics.math_fidelity, numerics.accumulate_df)
        shape, out = result.shape, pad(result)
    result = Tensor.from_padded(out, shape, numerics.output_df)
    if len(inputs) > 2:
        result = binary(result, inputs[2], np.add, numerics, keeps_zero=True)
    return result
