"""CollapseSumAsSum: collapse_sum_to (the gradient of a broadcast) as sum (+ reshape).

Autodiff writes the gradient of `bias + x` as `collapse_sum_to(dy, bias.shape)`. The device has
single-axis sums and reshapes; SplitMultiAxisOps (after this pass) splits the sum per axis. A bias
gradient sums only leading axes, so it is a sum that drops them (no reshape: one device op fewer
per bias in a training step); a sum that also collapses kept axes to 1 keeps its dims and reshapes.
"""

from tvm import relax
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import static_shape


@function_pass(opt_level=0, name="CollapseSumAsSum")
class CollapseSumAsSum:
    def __init__(self):
        self.x = wildcard()
        self.pattern = is_op("relax.collapse_sum_to")(self.x, wildcard())

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        x = matches[self.x]
        source, target = static_shape(x), static_shape(expr)
        if source is None or target is None:
            return expr
        lead = len(source) - len(target)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(target) if d == 1 and source[lead + i] != 1]
        if not axes:
            return relax.op.reshape(x, target) if list(source) != list(target) else x
        if axes == list(range(lead)):
            return relax.op.sum(x, axis=axes, keepdims=False)
        summed = relax.op.sum(x, axis=axes, keepdims=True)
        return relax.op.reshape(summed, target)
