"""ReconstructSoftmax: exp / sum(exp) written out -> one nn.softmax (and the log form -> one
nn.log_softmax).

    e = exp(x - max(x)) or exp(x);  e / sum(e)
    (x - max(x)) - log(sum(exp(x - max(x))))

The maximum may also come as topk(x, k=1)[0] (PyTorch's x.max(dim, keepdim=True)[0]). The device's
softmax subtracts the maximum itself, so both the stable and the plain form map to it.
"""

from tvm import relax
from tvm.relax.dpl import is_op, is_tuple_get_item, rewrite_call, wildcard
from tvm.relax.transform import function_pass


@function_pass(opt_level=0, name="ReconstructSoftmax")
class ReconstructSoftmax:
    def __init__(self):
        self.x = wildcard()
        self.max = is_op("relax.max")(self.x)
        self.topk = is_op("relax.topk")(self.x)
        shifted = is_op("relax.subtract")(self.x, self.max | is_tuple_get_item(self.topk, 0))
        exp = is_op("relax.exp")(shifted) | is_op("relax.exp")(self.x)
        self.sum = is_op("relax.sum")(exp)
        self.softmax = is_op("relax.divide")(exp, self.sum)
        self.log_sum = is_op("relax.sum")(is_op("relax.exp")(shifted))
        self.log_softmax = is_op("relax.subtract")(shifted, is_op("relax.log")(self.log_sum))
        self.pattern = self.softmax | self.log_softmax

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        x = matches[self.x]
        total = matches[self.sum] if self.softmax in matches else matches[self.log_sum]
        ndim = x.ty.ndim
        axis = _reduced_axis(total, ndim)
        if axis is None:
            return expr
        if self.max in matches and _reduced_axis(matches[self.max], ndim) != axis:
            return expr
        if self.topk in matches and not _is_top1(matches[self.topk], axis, ndim):
            return expr
        if self.softmax in matches:
            return relax.op.nn.softmax(x, axis=axis - ndim)
        return relax.op.nn.log_softmax(x, axis=axis - ndim)


def _reduced_axis(call: relax.Call, ndim: int) -> int | None:
    axes = call.attrs.axis
    if axes is None or len(axes) != 1 or not call.attrs.keepdims:
        return None
    return int(axes[0]) % ndim


def _is_top1(call: relax.Call, axis: int, ndim: int) -> bool:
    a = call.attrs
    return int(a.k) == 1 and bool(a.largest) and int(a.axis) % ndim == axis and a.ret_type in ("both", "values")
