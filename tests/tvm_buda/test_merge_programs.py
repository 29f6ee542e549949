"""MergeAdjacentPrograms: independent device functions with no host op between them run as one
device program (fewer program calls), with the values they gave apart. (A host op between keeps
them apart: tests/pybuda/test_training_bert.py checks the backward's two programs.)"""

import numpy as np
from tvm.script import ir as I
from tvm.script import relax as R

import tvm_buda
from tests.helpers import assert_matches_golden

rng = np.random.default_rng(3)
W = {f"w{i}": (rng.standard_normal((32, 32)) / 6).astype(np.float32) for i in range(1, 4)}


@I.ir_module
class TwoBranches:
    """Two chains that never meet."""

    @R.function
    def main(x: R.Tensor((8, 32), "float32"), y: R.Tensor((8, 32), "float32"), w1: R.Tensor((32, 32), "float32"),
             w2: R.Tensor((32, 32), "float32"), w3: R.Tensor((32, 32), "float32")):
        with R.dataflow():
            a = R.nn.relu(R.matmul(x, w1))
            b = R.nn.relu(R.matmul(y, w2))
            out = (a, R.matmul(b, w3))
            R.output(out)
        return out


def _reference(x, y):
    a = np.maximum(x @ W["w1"], 0)
    return a, np.maximum(y @ W["w2"], 0) @ W["w3"]


def test_independent_device_functions_become_one_program(monkeypatch):
    x, y = (rng.standard_normal((8, 32)).astype(np.float32) for _ in range(2))
    merged = tvm_buda.build(TwoBranches, params=W, name="branches")
    assert merged.num_device_subgraphs == 1 and not merged.cpu_ops(), merged.summary
    for got, want in zip(merged.run(x, y), _reference(x, y)):
        assert_matches_golden(got, want)

    import tvm

    from tvm_buda import partition
    unmerged = tvm.transform.module_pass(lambda mod, _ctx: mod, opt_level=0, name="Unmerged")
    monkeypatch.setattr(partition, "merge_adjacent_programs", unmerged)   # TVM's grouping alone
    apart = tvm_buda.build(TwoBranches, params=W, name="branches_apart")
    assert apart.num_device_subgraphs == 2
    for got, want in zip(merged.run(x, y), apart.run(x, y)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))   # the same bits as apart
