"""SplitAsSlices: the parts of a split that are used become strided slices."""

import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.split_as_slices import SplitAsSlices


@I.ir_module
class Before:
    """GPT-2's fused q/k/v projection, split in three along the last axis."""

    @R.function
    def main(qkv: R.Tensor((1, 8, 96), "float32")):
        with R.dataflow():
            parts = R.split(qkv, indices_or_sections=[32, 64], axis=2)
            q = parts[0]
            v = parts[2]
            y = R.add(q, v)
            R.output(y)
        return y


@I.ir_module
class Expected:
    @R.function
    def main(qkv: R.Tensor((1, 8, 96), "float32")):
        with R.dataflow():
            q = R.strided_slice(qkv, axes=[2], begin=[0], end=[32], strides=[1])
            v = R.strided_slice(qkv, axes=[2], begin=[64], end=[96], strides=[1])
            y = R.add(q, v)
            R.output(y)
        return y


def test_split_parts_become_slices():
    after = relax.transform.DeadCodeElimination()(SplitAsSlices()(Before))
    tvm.ir.assert_structural_equal(after, Expected)
