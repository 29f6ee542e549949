"""FoldConstantLayouts: data movement of constants is done in numpy, exactly."""

import numpy as np
import tvm
from tvm import relax

from relay_passes.fold_constant_layouts import FoldConstantLayouts
from relay_passes.scalars import constant_array


def _module(make):
    x = relax.Var("x", relax.TensorType((1, 1, 1, 4), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.add(x, make()))
        bb.emit_func_output(out)
    return bb.get()


def _folded(mod) -> np.ndarray:
    block = FoldConstantLayouts()(mod)["main"].body.blocks[0]
    add = block.bindings[-1].value
    value = constant_array(add.args[1])
    assert value is not None, add.args[1]
    return value


def test_permuted_and_reshaped_constants_fold_exactly():
    value = np.random.default_rng(0).standard_normal((1, 4, 1, 1)).astype(np.float32)
    permuted = _folded(_module(lambda: relax.op.permute_dims(relax.const(value), [0, 2, 3, 1])))
    np.testing.assert_array_equal(permuted, value.transpose(0, 2, 3, 1))
    vector = value.reshape(4)
    reshaped = _folded(_module(lambda: relax.op.reshape(relax.const(vector), (1, 1, 1, 4))))
    np.testing.assert_array_equal(reshaped, vector.reshape(1, 1, 1, 4))
    expanded = _folded(_module(lambda: relax.op.expand_dims(relax.const(vector), [0, 1, 2])))
    np.testing.assert_array_equal(expanded, vector.reshape(1, 1, 1, 4))


def test_data_movement_of_a_variable_stays():
    w = relax.Var("w", relax.TensorType((1, 4, 1, 1), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [w]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.permute_dims(w, [0, 2, 3, 1]))
        bb.emit_func_output(out)
    kept = bb.get()
    tvm.ir.assert_structural_equal(FoldConstantLayouts()(kept), kept)
