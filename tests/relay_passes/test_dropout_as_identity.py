"""DropoutAsIdentity: item 0 of nn.dropout (ONNX's Dropout) is its input at inference."""

import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.dropout_as_identity import DropoutAsIdentity


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((1, 16), "float32")):
        with R.dataflow():
            d = R.nn.dropout(x, rate=0.5)
            kept = d[0]
            y = R.nn.relu(kept)
            R.output(y)
        return y


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((1, 16), "float32")):
        with R.dataflow():
            y = R.nn.relu(x)
            R.output(y)
        return y


def test_dropout_output_is_its_input():
    tvm.ir.assert_structural_equal(DropoutAsIdentity()(Before), Expected)


def test_module_without_dropout_is_unchanged():
    tvm.ir.assert_structural_equal(DropoutAsIdentity()(Expected), Expected)
