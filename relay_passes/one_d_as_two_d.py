"""ConvPool1DAs2D: 1-D convolution and pooling run as their 2-D forms over a height of 1.

The device has 2-D convolution and pooling (PyBuda lowered Conv1d the same way). `conv1d(x, w)`
becomes conv2d over x and w reshaped to a height of 1, reshaped back, with strides, dilation and
padding applied along the width only; conv1d_transpose and max/avg_pool1d likewise. Reshapes, not expand_dims/squeeze:
the channels-last pass (ConvertLayout) carries reshapes across layouts. Only the NCW / OIW (IOW) layouts
the importers emit, with static shapes, are rewritten.
"""

import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator


def _ints(values) -> list[int]:
    return [int(v) for v in values]


def _out_dtype(dtype) -> str | None:
    text = str(dtype) if dtype is not None else ""
    return text if text and text not in ("None", "void") else None


def _static(expr) -> list[int] | None:
    shape = getattr(expr.ty, "shape", None)
    if shape is None or not all(isinstance(d, tvm.tirx.IntImm) for d in shape):
        return None
    return [int(d) for d in shape]


def _height_one(expr) -> relax.Expr:
    n, c, w = _static(expr)
    return relax.op.reshape(expr, (n, c, 1, w))


def _back(out: relax.Expr, call: relax.Call) -> relax.Expr:
    return relax.op.reshape(out, _static(call))


def _conv(call: relax.Call) -> relax.Expr | None:
    a = call.attrs
    if (str(a.data_layout), str(a.kernel_layout), str(a.out_layout)) != ("NCW", "OIW", "NCW"):
        return None
    if any(_static(e) is None for e in (call, *call.args)):
        return None
    left, right = _ints(a.padding)
    out = relax.op.nn.conv2d(
        _height_one(call.args[0]), _height_one(call.args[1]),
        strides=(1, _ints(a.strides)[0]), padding=(0, left, 0, right), dilation=(1, _ints(a.dilation)[0]),
        groups=int(a.groups), out_dtype=_out_dtype(a.out_dtype))
    return _back(out, call)


def _conv_transpose(call: relax.Call) -> relax.Expr | None:
    a = call.attrs
    if (str(a.data_layout), str(a.kernel_layout), str(a.out_layout)) != ("NCW", "IOW", "NCW"):
        return None
    if any(_static(e) is None for e in (call, *call.args)):
        return None
    left, right = _ints(a.padding)
    out = relax.op.nn.conv2d_transpose(
        _height_one(call.args[0]), _height_one(call.args[1]), strides=(1, _ints(a.strides)[0]),
        padding=(0, left, 0, right), output_padding=(0, _ints(a.output_padding)[0]),
        dilation=(1, _ints(a.dilation)[0]), groups=int(a.groups), out_dtype=_out_dtype(a.out_dtype))
    return _back(out, call)


def _pool(make):
    def rewrite(call: relax.Call) -> relax.Expr | None:
        a = call.attrs
        if str(a.layout) != "NCW" or str(a.out_layout) != "NCW" or _static(call) is None or _static(call.args[0]) is None:
            return None
        left, right = _ints(a.padding)
        out = make(_height_one(call.args[0]), pool_size=(1, _ints(a.pool_size)[0]),
                   strides=(1, _ints(a.strides)[0]), padding=(0, left, 0, right),
                   dilation=(1, _ints(a.dilation)[0]), ceil_mode=bool(a.ceil_mode),
                   count_include_pad=bool(a.count_include_pad))
        return _back(out, call)

    return rewrite


_REWRITES = {
    "relax.nn.conv1d": _conv,
    "relax.nn.conv1d_transpose": _conv_transpose,
    "relax.nn.max_pool1d": _pool(relax.op.nn.max_pool2d),
    "relax.nn.avg_pool1d": _pool(relax.op.nn.avg_pool2d),
}


@mutator
class _OneDMutator(PyExprMutator):
    def visit_call_(self, call: relax.Call) -> relax.Expr:
        call = super().visit_call_(call)
        rewrite = _REWRITES.get(call.op.name) if isinstance(call.op, tvm.ir.Op) else None
        new = rewrite(call) if rewrite else None
        return call if new is None else new


@tvm.transform.module_pass(opt_level=0, name="ConvPool1DAs2D")
class ConvPool1DAs2D:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        rewriter = _OneDMutator(mod)
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
        return relax.transform.Normalize()(rewriter.builder_.get())
