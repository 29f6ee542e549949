"""DecomposeStackAndAdaptivePool: two shape-level ops the device lacks, in terms of ones it has.

stack((a, b), axis) -> concat((expand_dims(a, axis), expand_dims(b, axis)), axis).
adaptive_avg_pool2d to 1x1 (global average pooling) -> mean over H and W; to an output that
divides the input -> avg_pool2d with kernel = stride = input / output.
"""

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
        return None
    window = [i // o for i, o in zip(spatial_in, spatial_out)]
    return relax.op.nn.avg_pool2d(x, window, strides=window, layout=a.layout, out_layout=a.layout)
