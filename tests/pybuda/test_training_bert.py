"""A 2-layer BERT-style encoder with a classification head, trained 20 steps on the simulator and
in PyTorch from the same weights and data. The embeddings' gradient scatter runs on the host."""

import copy

import pytest
import torch

import pybuda
from buda_runtime_sim.runtime import training
from tvm_buda.demo_models import bert_classifier
from tests.pybuda.training_helpers import max_relative_difference, train_in_torch, train_on_device, weight_pccs

STEPS = 20


def classification_data(steps: int):
    g = torch.Generator().manual_seed(1)
    return ([torch.randint(0, 64, (2, 8), generator=g) for _ in range(steps)],
            [torch.randint(0, 4, (2,), generator=g) for _ in range(steps)])


OPTIMIZERS = {
    "sgd": (lambda: pybuda.optimizers.SGD(learning_rate=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    "adam": (lambda: pybuda.optimizers.Adam(learning_rate=2e-3), lambda p: torch.optim.Adam(p, lr=2e-3)),
}


def train_both(name: str, arch=None):
    """Train bert_classifier 20 steps on the device and in PyTorch; return losses and weight PCCs."""
    model = bert_classifier()
    reference = copy.deepcopy(model)
    xs, ys = classification_data(STEPS)
    optimizer, make = OPTIMIZERS[name]
    losses, _ = train_on_device(model, xs, ys, optimizer(), arch=arch,
                                loss_module=pybuda.PyTorchModule("loss", torch.nn.CrossEntropyLoss()))
    expected = train_in_torch(reference, xs, ys, make, torch.nn.functional.cross_entropy)
    pccs = weight_pccs(model, reference)
    # The key bias adds the same q.b_k to every score of a row, which softmax ignores: its gradient
    # is zero in exact arithmetic, so both sides only see rounding noise (which Adam amplifies).
    pccs = {k: v for k, v in pccs.items() if not k.endswith("attention.self.key.bias")}
    return model, losses, expected, pccs


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_bert_classifier_trains_like_pytorch(name):
    model, losses, expected, pccs = train_both(name)
    assert max_relative_difference(losses, expected) <= 0.05, (losses, expected)
    assert min(pccs.values()) >= 0.99, min(pccs.items(), key=lambda kv: kv[1])
    moved = (model.bert.classifier.weight - bert_classifier().bert.classifier.weight).abs().max()
    assert moved > 1e-3  # the torch module holds trained weights
    # PyTorch's safe-softmax guard runs on the device: the forward is one device program after the
    # embedding lookups (the guard's int8 form would add a host max and a program per layer)
    model = training._session.devices[0].trainers[0].model
    forward, backward = model.forward_model, model.backward_model
    assert forward.num_device_subgraphs == 1 and "max" not in forward.cpu_ops(), forward.summary
    # the backward's device functions run as two programs, split only by the host's gradient
    # scatter for the pooler's token select (merge_programs.py)
    assert backward.num_device_subgraphs == 2, backward.summary


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_bert_classifier_at_float32_hifi4_is_within_half_a_percent(name):
    """Issue 13's tight bound. Measured: max per-step loss difference 0.055% (SGD), 0.056% (Adam);
    operands still enter the matrix unit as TF32, as numerics.md requires. Lowest weight PCC: the
    word embeddings under Adam, 0.998 (Adam scales tiny gradient differences up to full steps)."""
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32, math_fidelity=pybuda.MathFidelity.HiFi4)
    _, losses, expected, pccs = train_both(name, arch=pybuda.BackendDevice.Wormhole_B0)  # fp32 accumulation: Wormhole
    assert max_relative_difference(losses, expected) <= 0.005, (losses, expected)
    assert min(pccs.values()) >= 0.995, min(pccs.items(), key=lambda kv: kv[1])
