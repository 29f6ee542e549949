"""Results kept compact (compact_tensor.py) hold what a padded result holds: the same storage
when it is read, the same values without reading it, and the same bits through the ops after
(elementwise kernels computing on a compact operand's values included)."""

import numpy as np
import pytest

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim.compact_tensor import CompactTensor, compact_or_padded
from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.kernels import common
from buda_runtime_sim.tensor import Tensor, pad


@pytest.mark.parametrize("shape", [(4, 32, 2, 32), (64,), (4, 32, 1), (), (3, 5)])
def test_storage_is_made_on_first_read_and_is_what_pad_gives(shape):
    values = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    tensor = compact_or_padded(values, DataFormat.Float16_b)
    assert isinstance(tensor, CompactTensor) and not tensor.storage_made
    assert tensor.logical() is values and tensor.derived() is None and not tensor.storage_made
    assert np.array_equal(tensor.numpy(), values) and not tensor.storage_made
    storage = tensor.padded
    assert tensor.storage_made and tensor.padded is storage
    np.testing.assert_array_equal(storage, pad(values))
    np.testing.assert_array_equal(Tensor(storage, shape).logical(), values)


def test_tile_shapes_are_padded_at_once():
    values = np.ones((4, 32, 64), np.float32)
    tensor = compact_or_padded(values, DataFormat.Float16_b)
    assert type(tensor) is Tensor and tensor.padded.shape == (4, 32, 64)


class _Heads(pybuda.PyBudaModule):
    """An attention head split and merge, reductions and broadcasts: ops that make and read
    shapes far from tile multiples."""

    def forward(self, x, bias):
        heads = pybuda.op.Transpose("t", pybuda.op.Reshape("split", x, shape=(4, 32, 2, 32)), 1, 2)
        mean = pybuda.op.ReduceAvg("mean", heads, dim=-1)
        inv = pybuda.op.Divide("inv", 1.0, pybuda.op.Sqrt("sqrt", pybuda.op.Add("eps", pybuda.op.Relu("relu", mean), 1e-5)))
        centred = pybuda.op.Multiply("norm", pybuda.op.Subtract("centred", heads, mean), inv)
        scaled = pybuda.op.Multiply("scale", centred, pybuda.op.ReduceSum("sum", heads, dim=2))
        merged = pybuda.op.Reshape("merge", pybuda.op.Transpose("t2", scaled, 1, 2), shape=(128, 64))
        grad = pybuda.op.Reshape("vec", pybuda.op.ReduceSum("bias_grad", merged, dim=0), shape=(64,))
        out = pybuda.op.Matmul("mm", merged, pybuda.op.Transpose("wt", merged, 0, 1))
        return out, pybuda.op.Add("with_bias", grad, bias)


@pytest.mark.parametrize("fmt", [DataFormat.Float16_b, DataFormat.Float32, DataFormat.Bfp8_b])
def test_ops_after_compact_results_give_the_same_bits(monkeypatch, fmt):
    rng = np.random.default_rng(1)
    x = Tensor.from_array(rng.standard_normal((4, 32, 64)).astype(np.float32), fmt)
    bias = Tensor.from_array(rng.standard_normal(64).astype(np.float32), fmt)
    numerics = context.ExecutionContext(numerics=pybuda.CompilerConfig().numerics()).numerics
    numerics.default_df_override = fmt

    def run():
        with context.use(context.ExecutionContext(numerics=numerics)):
            return [(t.padded.copy(), t.numpy()) for t in _Heads("heads")(x, bias)]

    compact = run()
    with monkeypatch.context() as patch:
        patch.setattr(common, "compact_or_padded", lambda values, df: Tensor(pad(values), values.shape, df))
        padded = run()
    for (storage, values), (storage_ref, values_ref) in zip(compact, padded):
        np.testing.assert_array_equal(storage.view(np.uint32), storage_ref.view(np.uint32))
        np.testing.assert_array_equal(values.view(np.uint32), values_ref.view(np.uint32))
