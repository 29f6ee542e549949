"""DivideByConstantAsMultiply: x / c -> x * (1 / c) for a constant c.

The device divides as a multiply by a reciprocal anyway; folding the reciprocal of a constant at
compile time saves the SFPU pass, and leaves one canonical form (x * 0.7071...) for the
reconstruction patterns to match whether a framework wrote x / sqrt(2) or x * (1 / sqrt(2)).
"""

import numpy as np
from tvm import relax
from tvm.relax.dpl import is_const, is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import constant_array


@function_pass(opt_level=0, name="DivideByConstantAsMultiply")
class DivideByConstantAsMultiply:
    def __init__(self):
        self.numerator, self.divisor = wildcard(), is_const()
        self.pattern = is_op("relax.divide")(self.numerator, self.divisor)

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        divisor = constant_array(matches[self.divisor])
        if divisor is None or divisor.dtype.kind != "f" or not np.all(divisor != 0):
            return expr
        with np.errstate(over="ignore"):
            reciprocal = (1 / divisor).astype(divisor.dtype)
        return relax.op.multiply(matches[self.numerator], relax.const(reciprocal, str(divisor.dtype)))
