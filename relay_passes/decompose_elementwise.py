"""DecomposeElementwise: elementwise ops the device has no kernel for, in terms of ones it has.

rsqrt(x) -> 1 / sqrt(x);  negative(x) -> x * -1;  square(x) -> x * x;  silu(x) -> x * sigmoid(x);
sign(x) -> float(x > 0) - float(x < 0) (LPPool's |x|^p keeps the sign through it).
Runs after the reconstruction passes, which read rsqrt and negative in their TFLite forms.
"""

from tvm import relax
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import scalar_like

DECOMPOSITIONS = {
    "relax.rsqrt": lambda x: relax.op.divide(scalar_like(1.0, x), relax.op.sqrt(x)),
    "relax.negative": lambda x: relax.op.multiply(x, scalar_like(-1.0, x)),
    "relax.square": lambda x: relax.op.multiply(x, x),
    "relax.nn.silu": lambda x: relax.op.multiply(x, relax.op.sigmoid(x)),
    "relax.sign": lambda x: relax.op.subtract(relax.op.astype(relax.op.greater(x, scalar_like(0.0, x)), x.ty.dtype),
                                              relax.op.astype(relax.op.less(x, scalar_like(0.0, x)), x.ty.dtype)),
}


@function_pass(opt_level=0, name="DecomposeElementwise")
class DecomposeElementwise:
    def __init__(self):
        self.x = wildcard()
        self.roots = {is_op(op_name)(self.x): rule for op_name, rule in DECOMPOSITIONS.items()}
        patterns = list(self.roots)
        self.pattern = patterns[0]
        for pattern in patterns[1:]:
            self.pattern = self.pattern | pattern

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        x = matches[self.x]
        if str(x.ty.dtype) not in ("float32", "float16", "bfloat16"):
            return expr
        rule = next(rule for root, rule in self.roots.items() if root in matches)
        return rule(x)
