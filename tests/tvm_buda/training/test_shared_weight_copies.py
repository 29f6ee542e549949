"""A trained weight is converted to its device format once per update for the forward and the
backward program together (Parameter.set_value's shared device copies), with the values a fresh
conversion gives, and a later value given to one program alone is not seen by the other."""

import numpy as np
import torch

import pybuda
from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.module import Parameter
from buda_runtime_sim.runtime import training
from buda_runtime_sim.tensor import Tensor
from tests.pybuda.training_helpers import mlp, regression_data, train_on_device


def test_parameters_given_one_shared_dict_convert_once():
    value = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    shared = {}
    first, second = Parameter(8, 16, name="w"), Parameter(8, 16, name="w")
    first.set_value(value, device_copies=shared)
    second.set_value(value, device_copies=shared)
    converted = first.device_tensor(DataFormat.Float16_b)
    assert second.device_tensor(DataFormat.Float16_b) is converted
    assert np.array_equal(converted.padded, Tensor.from_array(value, DataFormat.Float16_b).padded)
    assert second.device_tensor(DataFormat.Float32) is not converted          # the format is part of the key
    second.set_value(value * 2)                                                # a value of its own
    assert np.array_equal(first.device_tensor(DataFormat.Float16_b).padded, converted.padded)
    assert np.array_equal(second.device_tensor(DataFormat.Float16_b).padded,
                          Tensor.from_array(value * 2, DataFormat.Float16_b).padded)


def _module_parameters(compiled) -> dict:
    return {(p.get_name()): p for subgraph, _ in compiled.subgraphs for p in subgraph.module.get_parameters()}


def test_forward_and_backward_programs_share_each_updated_weight():
    xs, ys = regression_data(steps=2)
    try:
        train_on_device(mlp(), xs, ys, pybuda.optimizers.SGD(learning_rate=0.1))
        model = training._session.devices[0].trainers[0].model
        forward, backward = _module_parameters(model.forward_model), _module_parameters(model.backward_model)
        both = sorted(set(forward) & set(backward))
        assert both                                           # weights the backward program reads too
        for name in both:
            converted = forward[name].device_tensor(DataFormat.Float16_b)
            assert backward[name].device_tensor(DataFormat.Float16_b) is converted
            fresh = Tensor.from_array(forward[name].value(), DataFormat.Float16_b)
            assert np.array_equal(converted.padded, fresh.padded)
            assert forward[name].value() is backward[name].value()            # this step's value, in both
        assert any(forward[name].value() is value for name in both for value in model.params.values())
    finally:
        pybuda.shutdown()
        torch.set_grad_enabled(True)
