"""SimplifySafeSoftmaxGuard: rewrite PyTorch's "safe softmax" guard into float ops the device runs.

torch.export's scaled-dot-product attention guards every softmax row that is entirely -inf (it
yields 0 instead of NaN):

    dead = logical_not(astype(max(astype(logical_not(equal(x, -inf)), int8)), bool))
    out  = where(dead, zeros, softmax(x))

The int8 round trip keeps it on the host, which splits BERT into several device subgraphs. The
same guard with the truth values as 0.0/1.0 floats runs on the device:

    alive = astype(not_equal(x, -inf), float);  dead = equal(max(alive, axis, keepdims=True), 0)
    out   = where(dead, 0.0, softmax(x))

(Testing max(x) == -inf would be shorter, but TVM's host max starts from the lowest finite float,
so on the host a row of -inf would never look dead.)
"""

import math

from tvm import relax
from tvm.relax.dpl import is_const, is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import dtype_of, is_filled_with, scalar_like, scalar_value


@function_pass(opt_level=0, name="SimplifySafeSoftmaxGuard")
class SimplifySafeSoftmaxGuard:
    def __init__(self):
        self.x, self.minus_inf, self.zero = wildcard(), is_const(), is_const()
        self.softmax = is_op("relax.nn.softmax")(self.x)
        alive = is_op("relax.logical_not")(is_op("relax.equal")(self.x, self.minus_inf))
        self.any_alive = is_op("relax.max")(is_op("relax.astype")(alive) | alive)
        dead = is_op("relax.logical_not")(is_op("relax.astype")(self.any_alive) | self.any_alive)
        zeros = is_op("relax.full_like")(self.softmax, self.zero) | self.zero
        self.pattern = is_op("relax.where")(dead, zeros, self.softmax)

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        softmax, any_alive = matches[self.softmax], matches[self.any_alive]
        minus_inf = scalar_value(matches[self.minus_inf])
        axis = softmax.attrs.axis
        same_axis = len(any_alive.attrs.axis) == 1 and int(any_alive.attrs.axis[0]) == int(axis)
        if not (same_axis and minus_inf == -math.inf and is_filled_with(matches[self.zero], 0.0)):
            return expr
        x = matches[self.x]
        alive = relax.op.astype(relax.op.not_equal(x, scalar_like(-math.inf, x)), dtype_of(x))
        dead = relax.op.equal(relax.op.max(alive, axis=[int(axis)], keepdims=True), scalar_like(0.0, x))
        return relax.op.where(dead, scalar_like(0.0, softmax), softmax)
