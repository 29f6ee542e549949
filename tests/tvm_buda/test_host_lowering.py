"""take_backward lowered by tvm_buda gives TVM's results bit for bit, and its LLVM build prints nothing."""

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.relax.op.grad import take_backward

from tvm_buda.host_lowering import lower_host_ops


def _module(x_shape, count: int, axis: int, index_dtype: str):
    grad_shape = list(x_shape)
    grad_shape[axis] = count
    grad = relax.Var("grad", relax.TensorType(grad_shape, "float32"))
    x = relax.Var("x", relax.TensorType(x_shape, "float32"))
    indices = relax.Var("indices", relax.TensorType([count], index_dtype))
    builder = relax.BlockBuilder()
    with builder.function("main", [grad, x, indices]):
        with builder.dataflow():
            out = builder.emit_output(take_backward(grad, x, indices, axis))
        builder.emit_func_output(out)
    return builder.get()


def _run(mod, *arrays):
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


@pytest.mark.parametrize("x_shape, axis, index_dtype", [((50, 24), 0, "int64"), ((3, 20, 8), 1, "int32"),
                                                        ((6, 30), 1, "int64")])
def test_take_backward_matches_tvm_bit_for_bit_without_warnings(x_shape, axis, index_dtype, capfd):
    rng = np.random.default_rng(0)
    count = 256  # far more indices than rows: every row sums many terms, whose rounding depends on order
    mod = _module(x_shape, count, axis, index_dtype)
    grad_shape = list(x_shape)
    grad_shape[axis] = count
    grad = rng.standard_normal(grad_shape).astype("float32") * 10.0 ** rng.integers(-3, 4, grad_shape)
    x = np.zeros(x_shape, "float32")
    indices = rng.integers(0, x_shape[axis], count).astype(index_dtype)
    expected = _run(mod, grad.astype("float32"), x, indices)
    assert "pragma" in capfd.readouterr().err  # TVM's own lowering (if this fails, TVM fixed it: drop ours)
    lowered = lower_host_ops(mod)
    assert not any(isinstance(f, relax.Function) and "take_backward(" in str(f) for f in lowered.functions.values())
    got = _run(lowered, grad.astype("float32"), x, indices)
    assert got.tobytes() == expected.tobytes()
    assert capfd.readouterr().err == ""


def test_a_module_without_the_op_is_returned_as_is():
    mod = _module((4, 4), 4, 0, "int64")
    mod = tvm.IRModule({mod.get_global_var("main"): relax.Function(mod["main"].params, mod["main"].params[1])})
    assert lower_host_ops(mod) is mod


def test_training_an_embedding_writes_nothing_to_stderr(capfd):
    # the embedding's gradient scatter runs on the host: before, its LLVM build printed TVM warnings
    import torch

    import pybuda
    from tests.pybuda.training_helpers import train_on_device

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(16, 32), torch.nn.Linear(32, 4))
    xs, ys = [torch.randint(0, 16, (2, 8))], [torch.randn(2, 8, 4)]
    losses, _ = train_on_device(model, xs, ys, pybuda.optimizers.SGD(learning_rate=0.1))
    assert len(losses) == 1
    assert capfd.readouterr().err == ""
