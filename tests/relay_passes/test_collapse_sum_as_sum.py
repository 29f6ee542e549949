"""CollapseSumAsSum: autodiff's collapse_sum_to as device sums, with a reshape only where needed."""

import numpy as np
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.collapse_sum_as_sum import CollapseSumAsSum
from relay_passes.split_multi_axis import SplitMultiAxisOps


@I.ir_module
class Before:
    @R.function
    def main(dy2: R.Tensor((8, 6), "float32"), dy3: R.Tensor((2, 4, 6), "float32")):
        with R.dataflow():
            bias2 = R.collapse_sum_to(dy2, R.shape([6]))        # a bias gradient: leading axis only
            bias3 = R.collapse_sum_to(dy3, R.shape([6]))        # two leading axes
            row = R.collapse_sum_to(dy3, R.shape([1, 6]))       # a kept axis collapsed to 1
            R.output(bias2, bias3, row)
        return bias2, bias3, row


@I.ir_module
class Expected:
    @R.function
    def main(dy2: R.Tensor((8, 6), "float32"), dy3: R.Tensor((2, 4, 6), "float32")):
        with R.dataflow():
            bias2 = R.sum(dy2, axis=[0], keepdims=False)
            bias3 = R.sum(dy3, axis=[0, 1], keepdims=False)
            summed = R.sum(dy3, axis=[0, 1], keepdims=True)
            row = R.reshape(summed, R.shape([1, 6]))
            R.output(bias2, bias3, row)
        return bias2, bias3, row


def test_bias_gradients_are_sums_without_a_reshape():
    tvm.ir.assert_structural_equal(CollapseSumAsSum()(Before), Expected)


def test_split_into_device_sums_without_a_reshape():
    split = SplitMultiAxisOps()(CollapseSumAsSum()(Before))
    text = split.script()
    assert "R.reshape" in text and text.count("R.reshape") == 1     # only the kept-axis case
    assert "collapse_sum_to" not in text


def test_same_values_as_collapse_sum_to():
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((8, 6)).astype(np.float32), rng.standard_normal((2, 4, 6)).astype(np.float32)]

    def run(mod):
        vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
        return [r.numpy() for r in vm["main"](*(tvm.runtime.tensor(a) for a in args))]

    for after, before in zip(run(SplitMultiAxisOps()(CollapseSumAsSum()(Before))), run(Before)):
        assert after.shape == before.shape
        np.testing.assert_allclose(after, before, rtol=1e-6)
