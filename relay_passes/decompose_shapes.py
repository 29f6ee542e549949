"""DecomposeStackAndAdaptivePool: two shape-level ops the device lacks, in terms of ones it has.

stack((a, b), axis) -> concat((expand_dims(a, axis), expand_dims(b, axis)), axis).
adaptive_avg_pool2d to 1x1 (global average pooling) -> mean over H and W; to an output that
divides the input -> avg_pool2d with kernel = stride = input / output; to any other output (NCHW)
-> a matmul per resized axis with its averaging matrix (row o averages inputs floor(o*I/O) to
ceil((o+1)*I/O), PyTorch's windows), H moved last and back by a transpose.
"""

import numpy as np
from tvm import relax
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import static_shape


@function_pass(opt_level=0, name="DecomposeStackAndAdaptivePool")
class DecomposeStackAndAdaptivePool:
    def __init__(self):
        self.x = wildcard()
        self.stack = is_op("relax.stack")(self.x)
        self.pool = is_op("relax.nn.adaptive_avg_pool2d")(self.x)
        self.pattern = self.stack | self.pool

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        x = matches[self.x]
        if self.stack in matches:
            stack = matches[self.stack]
            if not isinstance(x, relax.Tuple) or stack.attrs.axis is None:
                return expr
            axis = int(stack.attrs.axis)
            return relax.op.concat([relax.op.expand_dims(t, axis) for t in x.fields], axis=axis)
        pooled = _adaptive_pool(matches[self.pool], x)
        return expr if pooled is None else pooled


def _adaptive_pool(call: relax.Call, x) -> relax.Expr | None:
    a = call.attrs
    in_shape, out_shape = static_shape(x), static_shape(call)
    if a.layout not in ("NCHW", "NHWC") or a.out_layout != a.layout or in_shape is None or out_shape is None:
        return None
    h = a.layout.index("H") - 4 + len(in_shape)
    spatial_in, spatial_out = in_shape[h: h + 2], out_shape[h: h + 2]
    if spatial_out == [1, 1]:
        return relax.op.mean(x, axis=[h, h + 1], keepdims=True)
    if any(i % o for i, o in zip(spatial_in, spatial_out)):
        return _averaging_matmuls(x, spatial_in, spatial_out, str(x.ty.dtype)) if a.layout == "NCHW" else None
    window = [i // o for i, o in zip(spatial_in, spatial_out)]
    return relax.op.nn.avg_pool2d(x, window, strides=window, layout=a.layout, out_layout=a.layout)


def _averaging_matrix(size_in: int, size_out: int) -> np.ndarray:
    """(size_in, size_out): column o averages PyTorch's adaptive window o."""
    o = np.arange(size_out)
    start, end = (o * size_in) // size_out, -((-(o + 1) * size_in) // size_out)
    i = np.arange(size_in)[:, None]
    inside = (i >= start) & (i < end)
    return inside / (end - start)


def _averaging_matmuls(x, spatial_in: list[int], spatial_out: list[int], dtype: str) -> relax.Expr:
    ndim = len(static_shape(x))
    swap = list(range(ndim - 2)) + [ndim - 1, ndim - 2]
    (h_in, w_in), (h_out, w_out) = spatial_in, spatial_out
    if w_in != w_out:
        x = relax.op.matmul(x, relax.const(_averaging_matrix(w_in, w_out).astype(dtype)))
    if h_in != h_out:
        x = relax.op.permute_dims(x, swap)
        x = relax.op.matmul(x, relax.const(_averaging_matrix(h_in, h_out).astype(dtype)))
        x = relax.op.permute_dims(x, swap)
    return x
