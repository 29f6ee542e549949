"""ReconstructSoftmax: exp / sum(exp) -> nn.softmax; the log form -> nn.log_softmax."""

import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.reconstruct_softmax import ReconstructSoftmax


@I.ir_module
class Stable:
    @R.function
    def main(x: R.Tensor((2, 8, 16), "float32")):
        with R.dataflow():
            m = R.max(x, axis=[-1], keepdims=True)
            shifted = R.subtract(x, m)
            e = R.exp(shifted)
            s = R.sum(e, axis=[-1], keepdims=True)
            y = R.divide(e, s)
            R.output(y)
        return y


@I.ir_module
class ExpectedSoftmax:
    @R.function
    def main(x: R.Tensor((2, 8, 16), "float32")):
        with R.dataflow():
            y = R.nn.softmax(x, axis=-1)
            R.output(y)
        return y


@I.ir_module
class Plain:
    @R.function
    def main(x: R.Tensor((2, 8, 16), "float32")):
        with R.dataflow():
            e = R.exp(x)
            s = R.sum(e, axis=[2], keepdims=True)
            y = R.divide(e, s)
            R.output(y)
        return y


@I.ir_module
class LogForm:
    @R.function
    def main(x: R.Tensor((2, 8, 16), "float32")):
        with R.dataflow():
            m = R.max(x, axis=[1], keepdims=True)
            shifted = R.subtract(x, m)
            e = R.exp(shifted)
            s = R.sum(e, axis=[1], keepdims=True)
            log_s = R.log(s)
            y = R.subtract(shifted, log_s)
            R.output(y)
        return y


@I.ir_module
class ExpectedLogSoftmax:
    @R.function
    def main(x: R.Tensor((2, 8, 16), "float32")):
        with R.dataflow():
            y = R.nn.log_softmax(x, axis=-2)
            R.output(y)
        return y


def test_stable_softmax_becomes_one_op():
    tvm.ir.assert_structural_equal(ReconstructSoftmax()(Stable), ExpectedSoftmax)


def test_plain_softmax_becomes_one_op():
    tvm.ir.assert_structural_equal(ReconstructSoftmax()(Plain), ExpectedSoftmax)


def test_log_softmax_becomes_one_op():
    tvm.ir.assert_structural_equal(ReconstructSoftmax()(LogForm), ExpectedLogSoftmax)


@I.ir_module
class MaxOverOtherAxis:
    @R.function
    def main(x: R.Tensor((2, 8, 16), "float32")):
        with R.dataflow():
            m = R.max(x, axis=[1], keepdims=True)
            shifted = R.subtract(x, m)
            e = R.exp(shifted)
            s = R.sum(e, axis=[-1], keepdims=True)
            y = R.divide(e, s)
            R.output(y)
        return y


def test_a_max_over_another_axis_is_left_alone():
    tvm.ir.assert_structural_equal(ReconstructSoftmax()(MaxOverOtherAxis), MaxOverOtherAxis)
