"""perf_report(training=True): forward + backward + optimizer, the optimizer priced from its own rule."""

import pytest
import torch

import pybuda
import tvm_buda
from tvm_buda.training.perf import CountingMath


def test_training_step_cost_adds_backward_and_optimizer():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32))
    compiled = tvm_buda.compile_model(model, (torch.randn(32, 64),))
    inference = compiled.perf_report("wh_n150")
    host_sgd = compiled.perf_report("wh_n150", training=True)
    device_adam = compiled.perf_report("wh_n150", training=True,
                                       optimizer=pybuda.optimizers.Adam(1e-3, device_params=True))
    assert host_sgd.forward.device_seconds == pytest.approx(inference.device_seconds)
    assert host_sgd.forward.transfer_seconds > inference.transfer_seconds  # saved activations go to the host
    assert host_sgd.backward.seconds > host_sgd.forward.seconds  # two matmuls per linear, bias sums
    assert host_sgd.seconds == pytest.approx(host_sgd.forward.seconds + host_sgd.backward.seconds
                                             + host_sgd.optimizer.seconds)
    assert not host_sgd.optimizer.ops and host_sgd.optimizer.transfer_seconds > 0  # gradients and weights over PCIe
    adam_ops = device_adam.optimizer.ops
    assert len(adam_ops) > 4 * 8 and {o.data_format for o in adam_ops} == {"Float32"}
    assert "optimizer" in device_adam.summary() and device_adam.samples_per_second > 0


def test_counting_backend_follows_the_rule():
    sgd = pybuda.optimizers.SGD(0.1, momentum=0.9, weight_decay=0.1)
    counter = CountingMath()
    state = {}
    type(sgd).rule(counter, counter.value([[0.0]]), counter.value([[0.0]]), state, 1, dict(sgd.hyper, lr=0.1))
    assert [op for op, _ in counter.ops] == ["Multiply", "Add", "Multiply", "Subtract"]
