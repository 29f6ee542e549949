"""SimplifyLayoutChains: reshape and permute chains collapse; no-op reshapes and broadcasts go."""

import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.simplify_layout_chains import SimplifyLayoutChains


@I.ir_module
class Before:
    """BERT's attention output: three permutes in a row, and reshapes/broadcasts that change nothing."""

    @R.function
    def main(x: R.Tensor((1, 12, 8, 64), "float32")):
        with R.dataflow():
            b = R.broadcast_to(x, R.shape([1, 12, 8, 64]))
            p1 = R.permute_dims(b, axes=[2, 0, 1, 3])
            p2 = R.permute_dims(p1, axes=[1, 2, 0, 3])
            p3 = R.permute_dims(p2, axes=[0, 2, 1, 3])
            r1 = R.reshape(p3, R.shape([1, 8, 768]))
            r2 = R.reshape(r1, R.shape([8, 768]))
            r3 = R.reshape(r2, R.shape([8, 768]))
            R.output(r3)
        return r3


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((1, 12, 8, 64), "float32")):
        with R.dataflow():
            p = R.permute_dims(x, axes=[0, 2, 1, 3])
            r = R.reshape(p, R.shape([8, 768]))
            R.output(r)
        return r


def test_chains_collapse():
    tvm.ir.assert_structural_equal(SimplifyLayoutChains()(Before), Expected)


@I.ir_module
class RoundTrip:
    @R.function
    def main(x: R.Tensor((2, 3, 4), "float32")):
        with R.dataflow():
            p1 = R.permute_dims(x, axes=[2, 0, 1])
            p2 = R.permute_dims(p1, axes=[1, 2, 0])
            r1 = R.reshape(p2, R.shape([6, 4]))
            r2 = R.reshape(r1, R.shape([2, 3, 4]))
            y = R.add(r2, x)
            R.output(y)
        return y


@I.ir_module
class RoundTripExpected:
    @R.function
    def main(x: R.Tensor((2, 3, 4), "float32")):
        with R.dataflow():
            y = R.add(x, x)
            R.output(y)
        return y


def test_round_trips_disappear():
    tvm.ir.assert_structural_equal(SimplifyLayoutChains()(RoundTrip), RoundTripExpected)
