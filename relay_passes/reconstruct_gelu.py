"""ReconstructGelu: x * Phi(x) written out elementwise -> one nn.gelu / nn.gelu_tanh.

Frameworks and their converters write GELU as arithmetic: PyTorch and ONNX
(x * 0.5) * (erf(x * 0.7071) + 1), TFLite x * (erf(x * 0.7071) * 0.5 + 0.5), JAX
(x * (erf(x * 0.7071) + 1)) * 0.5, and the tanh approximation with
tanh((x + x**3 * 0.044715) * 0.7978). Runs after DivideByConstantAsMultiply, so x / sqrt(2)
arrives as x * 0.7071. Add and multiply match either operand order.
"""

import math

from tvm import relax
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import ScalarSlots

INV_SQRT2 = 1 / math.sqrt(2)
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
CUBIC = 0.044715


def _mul(a, b):
    return is_op("relax.multiply")(a, b)


def _add(a, b):
    return is_op("relax.add")(a, b)


@function_pass(opt_level=0, name="ReconstructGelu")
class ReconstructGelu:
    def __init__(self):
        self.x, self.scalars = wildcard(), ScalarSlots()
        c = self.scalars
        x = self.x
        self.erf = is_op("relax.erf")(_mul(x, c(INV_SQRT2)))
        cube = is_op("relax.power")(x, c(3.0)) | _mul(_mul(x, x), x) | _mul(x, _mul(x, x))
        self.tanh = is_op("relax.tanh")(_mul(_add(x, _mul(cube, c(CUBIC))), c(SQRT_2_OVER_PI)))
        self.pattern = self._gelu(self.erf) | self._gelu(self.tanh)

    def _gelu(self, core):
        """x * Phi(x) in the association orders frameworks use, Phi(x) = 0.5 * (1 + core)."""
        c, x = self.scalars, self.x
        one_plus = _add(core, c(1.0))
        phi = _mul(one_plus, c(0.5)) | _add(_mul(core, c(0.5)), c(0.5))
        return _mul(x, phi) | _mul(_mul(x, c(0.5)), one_plus) | _mul(_mul(x, one_plus), c(0.5))

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        if not self.scalars.hold(matches):
            return expr
        x = matches[self.x]
        return relax.op.nn.gelu(x) if self.erf in matches else relax.op.nn.gelu_tanh(x)
