"""DecomposeElementwise: rsqrt, negative, square and silu in terms of device ops."""

import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.decompose_elementwise import DecomposeElementwise


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 8), "float32")):
        with R.dataflow():
            a = R.rsqrt(x)
            b = R.negative(a)
            c = R.square(b)
            d = R.nn.silu(c)
            R.output(d)
        return d


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((2, 8), "float32")):
        with R.dataflow():
            s = R.sqrt(x)
            a = R.divide(R.const(1.0, "float32"), s)
            b = R.multiply(a, R.const(-1.0, "float32"))
            c = R.multiply(b, b)
            g = R.sigmoid(c)
            d = R.multiply(c, g)
            R.output(d)
        return d


def test_ops_without_kernels_become_ops_with_kernels():
    tvm.ir.assert_structural_equal(DecomposeElementwise()(Before), Expected)


@I.ir_module
class IntegerNegative:
    @R.function
    def main(x: R.Tensor((2, 8), "int32")):
        with R.dataflow():
            y = R.negative(x)
            R.output(y)
        return y


def test_integer_ops_are_left_for_the_host():
    tvm.ir.assert_structural_equal(DecomposeElementwise()(IntegerNegative), IntegerNegative)


def test_sign_is_two_comparisons():
    import numpy as np
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((7,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.sign(x))
        bb.emit_func_output(out)
    after = DecomposeElementwise()(bb.get())
    assert "R.sign" not in after.script()
    values = np.array([-2.5, -0.0, 0.0, 1e-30, 3.0, -1e-30, 7.0], np.float32)
    vm = relax.VirtualMachine(tvm.compile(after, target="llvm"), tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(values)).numpy(), np.sign(values))
