"""FoldConstantLayouts: reshape / permute_dims / expand_dims of a constant become a constant.

Pure data movement needs no compiled kernel: numpy does it exactly. TVM's FoldConstant builds
an LLVM function per folded call (about 50 ms each), and moving a CNN to channels-last leaves one
such permute per batch-norm and bias vector (ResNet-50: 5 s of compile time).
"""

import numpy as np
from tvm import relax
from tvm.relax.dpl import is_const, is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import constant_array, static_shape


@function_pass(opt_level=0, name="FoldConstantLayouts")
class FoldConstantLayouts:
    def __init__(self):
        self.value = is_const()
        self.reshape = is_op("relax.reshape")(self.value, wildcard())
        self.permute = is_op("relax.permute_dims")(self.value)
        self.expand = is_op("relax.expand_dims")(self.value)
        self.pattern = self.reshape | self.permute | self.expand

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        value = constant_array(matches[self.value])
        shape = static_shape(expr)
        if value is None or shape is None:
            return expr
        if self.permute in matches:
            axes = matches[self.permute].attrs.axes
            value = np.transpose(value, None if axes is None else [int(a) for a in axes])
        return relax.const(np.ascontiguousarray(value.reshape(shape)))
