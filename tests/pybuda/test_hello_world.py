"""The seed's first PyBuda model: a hand-written BudaMatmul on a TTDevice."""

import torch

import pybuda
import pybuda.op
from pybuda import PyBudaModule, TTDevice
from tests.helpers import assert_matches_golden


class BudaMatmul(PyBudaModule):
    def __init__(self, name):
        super().__init__(name)
        self.weights = pybuda.Parameter(1, 1, 32, 32, requires_grad=False)

    def forward(self, act):
        return pybuda.op.Matmul(self, "matmul", act, self.weights)


def test_hello_world_matmul():
    tt0 = TTDevice("grayskull0")
    lin0 = BudaMatmul("matmul0")
    tt0.place_module(lin0)
    act = torch.rand(1, 1, 32, 32)
    tt0.push_to_inputs(act)
    results = pybuda.run_inference(num_inputs=1, sequential=True)
    out = results.get()[0].value()
    golden = act @ torch.from_numpy(lin0.weights.value())
    assert out.shape == (1, 1, 32, 32)
    assert_matches_golden(out, golden)
