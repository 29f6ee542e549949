"""FillConstants: a scalar constant broadcast to a static shape is that filled constant."""

import numpy as np
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.fill_constants import FillConstants


def _module(value):
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                w = R.broadcast_to(value, R.shape([2, 3]))
                y = R.add(x, w)
                R.output(y)
            return y

    return Module


def test_broadcast_constant_is_filled():
    after = FillConstants()(_module(R.const(0.25, "float32")))
    filled = after["main"].body.blocks[0].bindings[0].value
    assert isinstance(filled, tvm.ir.Constant)
    np.testing.assert_array_equal(filled.value.numpy(), np.full((2, 3), 0.25, np.float32))


def test_broadcast_to_a_scalar_stays_a_scalar():
    """BEiT's relative position index broadcasts a scalar to shape () and expands it after: a filled
    constant of shape (1,) made the expand 2-D and the next broadcast an error."""
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            scalar = bb.emit(relax.op.broadcast_to(relax.const(51, "int64"), relax.ShapeExpr([])))
            row = bb.emit(relax.op.expand_dims(scalar, [0]))
            out = bb.emit_output(relax.op.broadcast_to(row, relax.ShapeExpr([17])))
        bb.emit_func_output(out)
    after = FillConstants()(bb.get())
    filled = after["main"].body.blocks[0].bindings[0].value
    assert isinstance(filled, tvm.ir.Constant) and filled.value.numpy().shape == ()
    assert [int(d) for d in after["main"].ret_ty.shape] == [17]


def test_broadcast_of_a_variable_is_left():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((1, 3), "float32")):
            with R.dataflow():
                y = R.broadcast_to(x, R.shape([2, 3]))
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(FillConstants()(Module), Module)


def test_arange_of_literals_is_filled():
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            out = bb.emit_output(relax.op.arange(-2, 8, 3, dtype="int64"))
        bb.emit_func_output(out)
    after = FillConstants()(bb.get())
    filled = after["main"].body.blocks[0].bindings[0].value
    assert isinstance(filled, tvm.ir.Constant)
    np.testing.assert_array_equal(filled.value.numpy(), np.arange(-2, 8, 3, dtype=np.int64))
