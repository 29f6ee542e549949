"""Framework module wrappers (tvm_buda/modules.py): PyTorchModule.forward / backward as the API reference has them."""

import pytest
import torch

import pybuda


def test_pytorch_module_backward_gives_torch_gradients():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    twin = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    twin.load_state_dict(model.state_dict())
    module = pybuda.PyTorchModule("mlp", model)
    x = torch.randn(3, 8, requires_grad=True)
    x_twin = x.detach().clone().requires_grad_(True)
    grad = torch.randn(3, 4)

    out = module.forward(x)
    module.backward((out, pybuda.Tensor.from_array(grad)))  # a pybuda Tensor gradient works too
    twin(x_twin).backward(grad)
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert torch.allclose(p.grad, q.grad), name
    assert torch.allclose(x.grad, x_twin.grad)

    module.backward([(module.forward(x), grad)])  # one list of pairs; gradients accumulate as in torch
    twin(x_twin).backward(grad)
    assert torch.allclose(model[0].weight.grad, twin[0].weight.grad)


def test_pytorch_module_backward_errors():
    module = pybuda.PyTorchModule("lin", torch.nn.Linear(4, 2))
    x = torch.randn(3, 4)
    with pytest.raises(ValueError, match="output #0 carries no autograd graph"):
        module.backward((module.cpu_eval(x), torch.ones(3, 2)))  # a device run keeps no graph
    with pytest.raises(ValueError, match=r"gradient #0 has shape \(2, 2\), its output has shape \(3, 2\)"):
        module.backward((module.forward(x), torch.ones(2, 2)))
    with pytest.raises(TypeError, match=r"argument #0 must be an \(output, gradient\) pair"):
        module.backward(module.forward(x))
    with pytest.raises(ValueError, match="needs \\(output, gradient\\) pairs"):
        module.backward()
