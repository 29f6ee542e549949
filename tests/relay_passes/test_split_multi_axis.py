"""SplitMultiAxisOps: reductions and slices over several axes become one-axis chains."""

import numpy as np
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.split_multi_axis import SplitMultiAxisOps


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 3, 4, 5), "float32")):
        with R.dataflow():
            m = R.mean(x, axis=[2, 3], keepdims=True)
            s = R.sum(x, axis=[1, -1], keepdims=False)
            t = R.max(x)
            c = R.strided_slice(x, axes=[1, 3], begin=[0, 1], end=[2, 5], strides=[1, 2])
            d = R.strided_slice(x, axes=[0], begin=[1], end=[2])
            R.output(m, s, t, c, d)
        return m, s, t, c, d


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((2, 3, 4, 5), "float32")):
        with R.dataflow():
            m1 = R.mean(x, axis=[3], keepdims=True)
            m = R.mean(m1, axis=[2], keepdims=True)
            s1 = R.sum(x, axis=[3], keepdims=False)
            s = R.sum(s1, axis=[1], keepdims=False)
            t1 = R.max(x, axis=[3], keepdims=False)
            t2 = R.max(t1, axis=[2], keepdims=False)
            t3 = R.max(t2, axis=[1], keepdims=False)
            t = R.max(t3, axis=[0], keepdims=False)
            c1 = R.strided_slice(x, axes=[1], begin=[0], end=[2], strides=[1])
            c = R.strided_slice(c1, axes=[3], begin=[1], end=[5], strides=[2])
            d = R.strided_slice(x, axes=[0], begin=[1], end=[2], strides=[1])
            R.output(m, s, t, c, d)
        return m, s, t, c, d


def test_one_axis_at_a_time():
    tvm.ir.assert_structural_equal(SplitMultiAxisOps()(Before), Expected)


def test_split_ops_compute_the_same_values():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)

    def run(mod):
        vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
        return [r.numpy() for r in vm["main"](tvm.runtime.tensor(x))]

    for after, before in zip(run(SplitMultiAxisOps()(Before)), run(Before)):
        np.testing.assert_allclose(after, before, rtol=1e-6)


@I.ir_module
class WholeTensor:
    @R.function
    def main(v: R.Tensor((6,), "float32"), s: R.Tensor((), "float32")):
        with R.dataflow():
            m = R.mean(v)
            t = R.sum(s)
            R.output(m, t)
        return m, t


@I.ir_module
class WholeTensorExpected:
    @R.function
    def main(v: R.Tensor((6,), "float32"), s: R.Tensor((), "float32")):
        with R.dataflow():
            m = R.mean(v, axis=[0], keepdims=False)
            R.output(m)
        return m, s


def test_reducing_every_axis_of_1d_names_the_axis_and_of_0d_is_identity():
    after = relax.transform.CanonicalizeBindings()(SplitMultiAxisOps()(WholeTensor))
    tvm.ir.assert_structural_equal(after, relax.transform.CanonicalizeBindings()(WholeTensorExpected))
