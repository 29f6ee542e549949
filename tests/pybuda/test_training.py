"""PyBuda's training API on the simulator, compared with the same training in PyTorch."""

import queue

import numpy as np
import pytest
import torch

import pybuda
from tests.pybuda.training_helpers import (max_relative_difference, mlp, regression_data, train_in_torch,
                                           train_on_device, twin, weight_pccs)

STEPS = 20


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_canonical_shape_matches_pytorch(name):
    model = mlp()
    reference = twin(model)
    xs, ys = regression_data(STEPS)
    if name == "sgd":
        optimizer = pybuda.optimizers.SGD(learning_rate=0.1)
        make = lambda params: torch.optim.SGD(params, lr=0.1)  # noqa: E731
    else:
        optimizer = pybuda.optimizers.Adam(learning_rate=0.01)
        make = lambda params: torch.optim.Adam(params, lr=0.01)  # noqa: E731
    losses, _ = train_on_device(model, xs, ys, optimizer)
    expected = train_in_torch(reference, xs, ys, make)
    assert len(losses) == STEPS
    assert max_relative_difference(losses, expected) <= 0.05, (losses, expected)
    assert expected[-1] < expected[0]  # it learns
    pccs = weight_pccs(model, reference)  # the wrapped torch module holds the trained weights
    assert min(pccs.values()) >= 0.99, pccs
    initial = dict(mlp().named_parameters())
    assert not torch.allclose(dict(model.named_parameters())["0.weight"], initial["0.weight"])
