"""DivideByConstantAsMultiply: x / c -> x * (1 / c) for constants; tensor divisors stay."""

import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.divide_by_constant import DivideByConstantAsMultiply


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 8), "float32"), y: R.Tensor((2, 8), "float32")):
        with R.dataflow():
            a = R.divide(x, R.const(4.0, "float32"))
            b = R.divide(a, y)
            c = R.divide(b, R.const(0.0, "float32"))
            R.output(c)
        return c


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((2, 8), "float32"), y: R.Tensor((2, 8), "float32")):
        with R.dataflow():
            a = R.multiply(x, R.const(0.25, "float32"))
            b = R.divide(a, y)
            c = R.divide(b, R.const(0.0, "float32"))  # no reciprocal of zero
            R.output(c)
        return c


def test_constant_divisors_become_multiplies():
    tvm.ir.assert_structural_equal(DivideByConstantAsMultiply()(Before), Expected)
