"""SimplifySafeSoftmaxGuard: PyTorch's all -inf row guard in float ops the device runs."""

import numpy as np
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.safe_softmax_guard import SimplifySafeSoftmaxGuard


@I.ir_module
class Before:
    """The guard as torch.export's attention leaves it (see spec/tvm_notes.md, BERT inventory)."""

    @R.function
    def main(x: R.Tensor((1, 2, 4, 4), "float32")):
        with R.dataflow():
            s = R.nn.softmax(x, axis=-1)
            is_inf = R.equal(x, R.const(float("-inf"), "float32"))
            alive = R.logical_not(is_inf)
            alive_i8 = R.astype(alive, "int8")
            any_alive = R.max(alive_i8, axis=[-1], keepdims=True)
            any_alive_b = R.astype(any_alive, "bool")
            dead = R.logical_not(any_alive_b)
            zeros = R.full_like(s, R.const(0.0, "float32"))
            y = R.where(dead, zeros, s)
            R.output(y)
        return y


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((1, 2, 4, 4), "float32")):
        with R.dataflow():
            s = R.nn.softmax(x, axis=-1)
            alive = R.not_equal(x, R.const(float("-inf"), "float32"))
            alive_f = R.astype(alive, "float32")
            any_alive = R.max(alive_f, axis=[-1], keepdims=True)
            dead = R.equal(any_alive, R.const(0.0, "float32"))
            y = R.where(dead, R.const(0.0, "float32"), s)
            R.output(y)
        return y


def test_guard_becomes_float_ops():
    tvm.ir.assert_structural_equal(SimplifySafeSoftmaxGuard()(Before), Expected)


def test_guard_after_constant_folding_is_recognised_too():
    """FoldConstant turns full_like(softmax, 0) into a tensor of zeros; still the same guard."""
    folded = relax.transform.FoldConstant()(Before)
    ops = [b.value.op.name for b in SimplifySafeSoftmaxGuard()(folded)["main"].body.blocks[0].bindings]
    assert ops == ["relax.nn.softmax", "relax.not_equal", "relax.astype", "relax.max", "relax.equal", "relax.where"]


def test_rows_of_minus_inf_still_give_zeros():
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    x[0, 1, 2] = -np.inf

    def run(mod):
        vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
        return vm["main"](tvm.runtime.tensor(x)).numpy()

    after = run(SimplifySafeSoftmaxGuard()(Before))
    np.testing.assert_array_equal(after[0, 1, 2], 0.0)
    np.testing.assert_allclose(after, run(Before), rtol=1e-6)
