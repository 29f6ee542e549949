"""GuardTakeIndices: take's unchecked "fast" mode becomes "clip"."""

import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.guard_take import GuardTakeIndices


@I.ir_module
class Before:
    @R.function
    def main(w: R.Tensor((10, 4), "float32"), ids: R.Tensor((3,), "int32")):
        with R.dataflow():
            y = R.take(w, ids, axis=0, mode="fast")
            R.output(y)
        return y


@I.ir_module
class Expected:
    @R.function
    def main(w: R.Tensor((10, 4), "float32"), ids: R.Tensor((3,), "int32")):
        with R.dataflow():
            y = R.take(w, ids, axis=0, mode="clip")
            R.output(y)
        return y


def test_fast_take_is_clipped():
    tvm.ir.assert_structural_equal(GuardTakeIndices()(Before), Expected)
