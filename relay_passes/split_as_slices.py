"""SplitAsSlices: each used part of split(x) -> one strided_slice of x.

split returns a tuple, which no device op produces; GPT-2 splits its fused q/k/v projection this
way, and leaving split on the host costs two graph breaks per layer. The unused split goes with
dead-code elimination.
"""

from tvm import relax
from tvm.relax.dpl import is_op, is_tuple_get_item, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import type_shape


@function_pass(opt_level=0, name="SplitAsSlices")
class SplitAsSlices:
    def __init__(self):
        self.x = wildcard()
        self.split = is_op("relax.split")(self.x)
        self.part = is_tuple_get_item(self.split)
        self.pattern = self.part

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        split, index = matches[self.split], matches[self.part].index
        shapes = [type_shape(field) for field in split.ty.fields]
        if any(s is None for s in shapes):
            return expr
        axis = int(split.attrs.axis) % len(shapes[0])
        begin = sum(s[axis] for s in shapes[:index])
        end = begin + shapes[index][axis]
        return relax.op.strided_slice(matches[self.x], [axis], [begin], [end], [1])
