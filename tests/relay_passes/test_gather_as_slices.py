"""GatherAsSlices: take with constant indices (PyTorch's reflect/replicate pads) as slices + concat."""

import numpy as np
import torch
from tvm import relax

import tvm_buda
from relay_passes.gather_as_slices import GatherAsSlices, _runs
from tests.helpers import assert_matches_golden
from tests.relay_passes.ir import op_names, run_llvm


def test_runs_of_consecutive_indices():
    assert _runs(np.array([2, 1, 0, 1, 2, 3, 4, 3, 3])) == [(2, 3), (1, 2), (0, 5), (3, 4), (3, 4)]


def _take_module(index: np.ndarray, mode: str = "clip"):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 5, 3), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.take(x, relax.const(index, "int64"), axis=1, mode=mode))
        bb.emit_func_output(out)
    return bb.get()


def test_constant_take_becomes_slices_with_the_same_result():
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    for index, mode in ((np.array([2, 1, 0, 1, 2, 3, 4, 3]), "clip"), (np.array(3), "clip"),
                        (np.array([-1, 0, 6]), "wrap"), (np.array([-1, 0, 6]), "clip")):
        before = _take_module(index, mode)
        after = GatherAsSlices()(before)
        assert "relax.take" not in op_names(after)
        np.testing.assert_array_equal(run_llvm(after, x), run_llvm(before, x))


def test_reflect_and_replicate_pads_run_on_the_device():
    model = torch.nn.Sequential(torch.nn.ReflectionPad2d((1, 2, 2, 0)), torch.nn.ReplicationPad2d(1)).eval()
    x = torch.randn(1, 2, 5, 6)
    compiled = tvm_buda.compile_model(model, (x,))
    assert compiled.cpu_ops() == [], compiled.cpu_ops()
    assert_matches_golden(compiled.run(x), model(x))


def test_embedding_lookups_stay_gathers():
    """A gather from a weight is an embedding: constant ids or not, it stays on the host by policy."""
    class Fixed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)

        def forward(self, x):
            return self.emb(torch.tensor([1, 2, 3])) + x

    fixed = Fixed().eval()
    x = torch.randn(3, 4)
    compiled = tvm_buda.compile_model(fixed, (x,))
    assert "take" in compiled.cpu_ops(), compiled.cpu_ops()
    assert_matches_golden(compiled.run(x), fixed(x))
