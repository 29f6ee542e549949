"""PyBuda's training API on the simulator, compared with the same training in PyTorch."""

import queue

import numpy as np
import pytest
import torch

import pybuda
from buda_runtime_sim.verify import pcc
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


def test_loss_on_tt_device_at_float32_hifi4_is_tight():
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32, math_fidelity=pybuda.MathFidelity.HiFi4)
    model = mlp()
    reference = twin(model)
    xs, ys = regression_data(STEPS)
    losses, _ = train_on_device(model, xs, ys, pybuda.optimizers.SGD(learning_rate=0.1),
                                loss_module=pybuda.op.loss.MSELoss("mse"), loss_on_tt=True,
                                arch=pybuda.BackendDevice.Wormhole_B0)  # Float32 accumulation needs Wormhole
    expected = train_in_torch(reference, xs, ys, lambda p: torch.optim.SGD(p, lr=0.1), torch.nn.functional.mse_loss)
    assert max_relative_difference(losses, expected) <= 0.005, (losses, expected)
    assert min(weight_pccs(model, reference).values()) >= 0.9999


def test_manual_loop_gradients_checkpoints_and_updates():
    model = mlp()
    reference = twin(model)
    xs, ys = regression_data(2)
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("model", model),
                          optimizer=pybuda.optimizers.SGD(learning_rate=0.1))
    tt0.place_loss_module(pybuda.op.loss.L1Loss("l1"))
    checkpoint_q = pybuda.initialize_pipeline(training=True, sample_inputs=(xs[0],), sample_targets=(ys[0],))
    for x, y in zip(xs, ys):
        tt0.push_to_inputs(x)
        tt0.push_to_target_inputs(y)
    with pytest.raises(RuntimeError, match="run_backward before run_forward"):
        pybuda.run_backward(input_count=1)
    pybuda.run_forward(input_count=1)
    pybuda.run_backward(input_count=1, zero_grad=True)
    grads = pybuda.get_parameter_gradients(tt0)
    torch.nn.functional.l1_loss(reference(xs[0]), ys[0]).backward()
    names = {"p_0_weight": "0.weight", "p_0_bias": "0.bias", "p_2_weight": "2.weight", "p_2_bias": "2.bias"}
    ref_params = dict(reference.named_parameters())
    assert set(grads) == set(names)
    for graph_name, torch_name in names.items():
        assert pcc(grads[graph_name].value(), ref_params[torch_name].grad) >= 0.99, graph_name
    assert len(pybuda.get_parameter_gradients()) == 1
    pybuda.run_optimizer(checkpoint=True)
    checkpoint = checkpoint_q.get()[0]
    assert np.allclose(checkpoint["p_0_weight"].value(), model[0].weight.detach(), atol=1e-6)
    assert np.allclose(tt0.get_parameter_checkpoint()["p_2_bias"].value(), model[2].bias.detach())
    pybuda.update_device_parameters(tt0, {"p_2_bias": torch.zeros(4)})  # pushed onto the device and the module
    assert torch.equal(model[2].bias.detach(), torch.zeros(4))
    pybuda.run_forward(input_count=1)
    pybuda.run_backward(input_count=1, zero_grad=True)
    assert pybuda.get_parameter_gradients(tt0)["p_0_weight"].value().abs().sum() > 0


def test_accumulation_of_four_equals_one_step_on_four_times_the_batch():
    model = mlp()
    reference = twin(model)
    xs, ys = regression_data(8)  # 2 steps of 4 micro-batches of 8
    losses, _ = train_on_device(model, xs, ys, pybuda.optimizers.SGD(learning_rate=0.01),
                                loss_module=pybuda.PyTorchModule("loss", torch.nn.L1Loss(reduction="sum")),
                                accumulation_steps=4)
    big_x = [torch.cat(xs[i:i + 4]) for i in (0, 4)]
    big_y = [torch.cat(ys[i:i + 4]) for i in (0, 4)]
    expected = train_in_torch(reference, big_x, big_y, lambda p: torch.optim.SGD(p, lr=0.01),
                              lambda a, b: torch.nn.functional.l1_loss(a, b, reduction="sum"))
    per_step = [sum(losses[i:i + 4]) for i in (0, 4)]  # summed losses add up like the gradients
    assert max_relative_difference(per_step, expected) <= 0.05, (per_step, expected)
    assert min(weight_pccs(model, reference).values()) >= 0.99


def test_checkpoint_interval_and_a_host_optimizer_on_the_cpu_device():
    """The first layer on tt0 (pybuda SGD), the second on cpu0 with torch's SGD (optimizer_f) and the loss."""
    model = mlp()
    reference = twin(model)
    xs, ys = regression_data(4)
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("first", model[0]),
                          optimizer=pybuda.optimizers.SGD(learning_rate=0.1))
    cpu0 = pybuda.CPUDevice("cpu0", optimizer_f=lambda m: torch.optim.SGD(m.parameters(), lr=0.1))
    cpu0.place_module(pybuda.PyTorchModule("rest", torch.nn.Sequential(model[1], model[2])))
    cpu0.place_loss_module(pybuda.PyTorchModule("loss", torch.nn.L1Loss()))
    for x, y in zip(xs, ys):
        tt0.push_to_inputs(x)
        cpu0.push_to_target_inputs(y)
    loss_q = queue.Queue()
    checkpoint_q = pybuda.run_training(steps=4, checkpoint_interval=2, loss_queue=loss_q)
    checkpoints = [checkpoint_q.get() for _ in range(checkpoint_q.qsize())]
    assert len(checkpoints) == 3  # after steps 2 and 4, then the final weights
    assert set(checkpoints[-1][0]) == {"p_weight", "p_bias"} and set(checkpoints[-1][1]) == {"1.weight", "1.bias"}
    expected = train_in_torch(reference, xs, ys, lambda p: torch.optim.SGD(p, lr=0.1))
    losses = [float(loss_q.get()[0].value()) for _ in range(4)]
    assert max_relative_difference(losses, expected) <= 0.05
    assert min(weight_pccs(model, reference).values()) >= 0.99


def test_bad_input_gives_clear_errors():
    frozen = mlp()
    for p in frozen.parameters():
        p.requires_grad_(False)
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("frozen", frozen),
                          optimizer=pybuda.optimizers.SGD(learning_rate=0.1))
    tt0.place_loss_module(pybuda.op.loss.L1Loss("l1"))
    with pytest.raises(RuntimeError, match="run_backward needs a pipeline initialized for training"):
        pybuda.run_backward()
    tt0.push_to_inputs(torch.randn(8, 16))
    tt0.push_to_target_inputs(torch.randn(8, 3))
    with pytest.raises(ValueError, match=r"target #0 has shape \(8, 3\).*output.*\(8, 4\)"):
        pybuda.run_training(steps=1)
    pybuda.shutdown()
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("frozen", frozen),
                          optimizer=pybuda.optimizers.SGD(learning_rate=0.1))
    tt0.place_loss_module(pybuda.op.loss.L1Loss("l1"))
    tt0.push_to_inputs(torch.randn(8, 16))
    tt0.push_to_target_inputs(torch.randn(8, 4))
    with pytest.raises(ValueError, match="no module on the device has trainable parameters"):
        pybuda.run_training(steps=1)
    pybuda.shutdown()
    pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("model", mlp()))
    with pytest.raises(RuntimeError, match="training needs a loss"):
        pybuda.initialize_pipeline(training=True)


class BudaMlp(pybuda.PyBudaModule):
    def __init__(self, name):
        super().__init__(name)
        g = torch.Generator().manual_seed(0)
        self.w1 = pybuda.Parameter(torch.randn(16, 32, generator=g) * 0.3, requires_grad=True)
        self.b1 = pybuda.Parameter(torch.zeros(1, 32), requires_grad=True)
        self.w2 = pybuda.Parameter(torch.randn(32, 4, generator=g) * 0.3, requires_grad=True)
        self.frozen = pybuda.Parameter(torch.ones(1, 4), requires_grad=False)

    def forward(self, x):
        h = pybuda.op.Relu("relu", pybuda.op.Add("bias", pybuda.op.Matmul("mm1", x, self.w1), self.b1))
        return pybuda.op.Multiply("scale", pybuda.op.Matmul("mm2", h, self.w2), self.frozen)


def test_pybuda_module_with_trainable_parameters_trains():
    module = BudaMlp("mlp")
    reference = {k: torch.tensor(module.get_parameter(k).value().copy(), requires_grad=True)
                 for k in ("w1", "b1", "w2")}
    tt0 = pybuda.TTDevice("tt0", module=module, optimizer=pybuda.optimizers.SGD(learning_rate=0.1))
    tt0.place_loss_module(pybuda.op.loss.L1Loss("l1"))
    xs, ys = regression_data(10)
    for x, y in zip(xs, ys):
        tt0.push_to_inputs(x)
        tt0.push_to_target_inputs(y)
    loss_q = queue.Queue()
    pybuda.run_training(steps=10, loss_queue=loss_q)
    losses = [float(loss_q.get()[0].value()) for _ in range(10)]
    optimizer = torch.optim.SGD(reference.values(), lr=0.1)
    expected = []
    for x, y in zip(xs, ys):
        optimizer.zero_grad()
        out = torch.relu(x @ reference["w1"] + reference["b1"]) @ reference["w2"]
        loss = torch.nn.functional.l1_loss(out, y)
        loss.backward()
        optimizer.step()
        expected.append(loss.item())
    assert max_relative_difference(losses, expected) <= 0.05, (losses, expected)
    for name, value in reference.items():  # the module's Parameters hold the trained values
        assert pcc(module.get_parameter(name).value(), value.detach()) >= 0.99, name
    assert np.array_equal(module.get_parameter("frozen").value(), np.ones((1, 4), np.float32))
    assert set(tt0.get_parameter_checkpoint()) == {"w1", "b1", "w2", "frozen"}
