"""ConvPool1DAs2D: 1-D convolution and pooling run as their 2-D forms over a height of 1.

The device has 2-D convolution and pooling (PyBuda lowered Conv1d the same way). `conv1d(x, w)`
becomes conv2d over x and w reshaped to a height of 1, reshaped back, with strides, dilation and
padding applied along the width only; conv1d_transpose and max/avg_pool1d likewise. Reshapes, not expand_dims/squeeze:
the channels-last pass (ConvertLayout) carries reshapes across layouts. Only the NCW / OIW (IOW) layouts
the importers emit, with static shapes, are rewritten.
"""

import tvm
from tvm import relax

from .call_rewrites import ints, out_dtype, rewrite_calls
from .scalars import static_shape


def _height_one(expr) -> relax.Expr:
    n, c, w = static_shape(expr)
    return relax.op.reshape(expr, (n, c, 1, w))


def _back(out: relax.Expr, call: relax.Call) -> relax.Expr:
    return relax.op.reshape(out, static_shape(call))


def _conv(call: relax.Call) -> relax.Expr | None:
    a = call.attrs
    if (str(a.data_layout), str(a.kernel_layout), str(a.out_layout)) != ("NCW", "OIW", "NCW"):
        return None
    if any(static_shape(e) is None for e in (call, *call.args)):
        return None
    left, right = ints(a.padding)
    out = relax.op.nn.conv2d(
        _height_one(call.args[0]), _height_one(call.args[1]),
        strides=(1, ints(a.strides)[0]), padding=(0, left, 0, right), dilation=(1, ints(a.dilation)[0]),
        groups=int(a.groups), out_dtype=out_dtype(a.out_dtype))
    return _back(out, call)


def _conv_transpose(call: relax.Call) -> relax.Expr | None:
    a = call.attrs
    if (str(a.data_layout), str(a.kernel_layout), str(a.out_layout)) != ("NCW", "IOW", "NCW"):
        return None
    if any(static_shape(e) is None for e in (call, *call.args)):
        return None
    left, right = ints(a.padding)
    out = relax.op.nn.conv2d_transpose(
        _height_one(call.args[0]), _height_one(call.args[1]), strides=(1, ints(a.strides)[0]),
        padding=(0, left, 0, right), output_padding=(0, ints(a.output_padding)[0]),
        dilation=(1, ints(a.dilation)[0]), groups=int(a.groups), out_dtype=out_dtype(a.out_dtype))
    return _back(out, call)


def _pool(make):
    def rewrite(call: relax.Call) -> relax.Expr | None:
        a = call.attrs
        if str(a.layout) != "NCW" or str(a.out_layout) != "NCW" or static_shape(call) is None or static_shape(call.args[0]) is None:
            return None
        left, right = ints(a.padding)
        out = make(_height_one(call.args[0]), pool_size=(1, ints(a.pool_size)[0]),
                   strides=(1, ints(a.strides)[0]), padding=(0, left, 0, right),
                   dilation=(1, ints(a.dilation)[0]), ceil_mode=bool(a.ceil_mode),
                   count_include_pad=bool(a.count_include_pad))
        return _back(out, call)

    return rewrite


_REWRITES = {
    "relax.nn.conv1d": _conv,
    "relax.nn.conv1d_transpose": _conv_transpose,
    "relax.nn.max_pool1d": _pool(relax.op.nn.max_pool2d),
    "relax.nn.avg_pool1d": _pool(relax.op.nn.avg_pool2d),
}


@tvm.transform.module_pass(opt_level=0, name="ConvPool1DAs2D")
class ConvPool1DAs2D:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        return rewrite_calls(mod, _REWRITES)
