"""SplitMultiAxisOps: reductions and slices over several axes -> chains over one axis each.

PyBuda's reductions and Index take one dimension. mean(x, [2, 3]) becomes mean(mean(x, 3), 2)
(exact: every inner mean covers the same count), a reduction over all axes becomes one per axis,
from the last axis to the first (with keepdims=False each drops its axis: the lower axes keep their
numbers, and no reshape is needed). A reduction over all axes of a 1-d tensor names its axis;
of a 0-d tensor it is the identity. strided_slice gets one call per axis, with its strides
written out (the partition pattern expects all five arguments).
"""

from tvm import relax, tirx
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass


REDUCTIONS = {"relax.sum": relax.op.sum, "relax.mean": relax.op.mean, "relax.max": relax.op.max,
              "relax.min": relax.op.min}


@function_pass(opt_level=0, name="SplitMultiAxisOps")
class SplitMultiAxisOps:
    def __init__(self):
        self.x = wildcard()
        reductions = [is_op(name)(self.x) for name in REDUCTIONS]
        self.reduction = reductions[0] | reductions[1] | reductions[2] | reductions[3]
        slices = is_op("relax.strided_slice")
        self.slice = slices(self.x, wildcard(), wildcard(), wildcard()) | slices(
            self.x, wildcard(), wildcard(), wildcard(), wildcard())
        self.pattern = self.reduction | self.slice

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        x = matches[self.x]
        if self.slice in matches:
            split = _split_slice(matches[self.slice], x)
        else:
            split = _split_reduction(matches[self.reduction], x)
        return expr if split is None else split


def _split_reduction(call: relax.Call, x) -> relax.Expr | None:
    ndim = x.ty.ndim
    axes = list(range(ndim)) if call.attrs.axis is None else sorted({int(a) % ndim for a in call.attrs.axis})
    reduce = REDUCTIONS[call.op.name]
    if ndim == 0:
        return x  # a reduction of a 0-d tensor is that tensor
    if len(axes) == 1:  # axis=None over a 1-d tensor: the device wants the axis named
        return None if call.attrs.axis is not None else reduce(x, axis=axes, keepdims=bool(call.attrs.keepdims))
    out, keepdims = x, bool(call.attrs.keepdims)
    for axis in reversed(axes):
        out = reduce(out, axis=[axis], keepdims=keepdims)
    return out


def _split_slice(call: relax.Call, x) -> relax.Expr | None:
    axes, begin, end = (list(part.fields) for part in call.args[1:4])
    strides = list(call.args[4].fields) if len(call.args) == 5 else [tirx.IntImm("int64", 1)] * len(axes)
    if len(call.args) == 5 and len(axes) == 1:
        return None
    assume_inbound = bool(call.attrs.assume_inbound)
    out = x
    for parts in zip(axes, begin, end, strides):
        out = relax.op.strided_slice(out, *([p] for p in parts), assume_inbound=assume_inbound)
    return out
