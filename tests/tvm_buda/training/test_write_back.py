"""Trained values written back into torch parameters (frameworks._write_torch)."""

import numpy as np
import torch

from tvm_buda.training.frameworks import _write_torch


def test_values_reach_the_parameters_and_follow_new_storage():
    model = torch.nn.Linear(4, 3)
    params = dict(model.named_parameters())
    names = {"p_weight": "weight", "p_bias": "bias"}
    views = {}
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    version = model.weight._version
    _write_torch(params, names, {"p_weight": w, "p_bias": np.ones(3, np.float32), "other": w}, views)
    assert torch.equal(model.weight.detach(), torch.from_numpy(w))
    assert torch.equal(model.bias.detach(), torch.ones(3))
    assert model.weight._version > version          # autograd sees the in-place write
    model.weight.data = torch.zeros(3, 4)            # new storage: the old view must not be used
    _write_torch(params, names, {"p_weight": w + 1}, views)
    assert torch.equal(model.weight.detach(), torch.from_numpy(w + 1))


def test_other_dtypes_are_converted():
    model = torch.nn.Linear(4, 3).to(torch.bfloat16)
    params = dict(model.named_parameters())
    w = np.full((3, 4), 1.5, np.float32)
    _write_torch(params, {"p_weight": "weight"}, {"p_weight": w}, {})
    assert model.weight.dtype == torch.bfloat16 and torch.equal(model.weight.float(), torch.from_numpy(w))
