"""Ops computed from weights only run once and are reused, until a weight changes."""

import numpy as np

import pybuda
from buda_runtime_sim import kernels as ops


class TransposedWeight(pybuda.PyBudaModule):
    def __init__(self, name):
        super().__init__(name)
        self.w = pybuda.Parameter(np.arange(64 * 32, dtype=np.float32).reshape(64, 32) / 1000, requires_grad=False)

    def forward(self, x):
        wt = pybuda.op.Transpose("wt", self.w, 0, 1)
        return pybuda.op.Matmul("mm", x, wt)


def test_weight_transpose_runs_once_and_follows_updates(monkeypatch):
    calls = []
    original = ops.KERNELS["Transpose"]
    monkeypatch.setitem(ops.KERNELS, "Transpose", lambda *a: calls.append(1) or original(*a))
    module = TransposedWeight("m")
    x = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
    first = module(x).numpy()
    second = module(x).numpy()
    assert len(calls) == 1 and np.array_equal(first, second)
    module.set_parameter("w", np.ones((64, 32), np.float32))
    third = module(x).numpy()
    assert len(calls) == 2
    np.testing.assert_allclose(third, x @ np.ones((32, 64), np.float32), rtol=0.02, atol=0.05)
