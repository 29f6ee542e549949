"""pybuda.op.loss: forward values and backward gradients against torch.nn's losses, on the simulator."""

import numpy as np
import pytest
import torch

from buda_runtime_sim import context
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.numerics_config import NumericsConfig
from buda_runtime_sim.op import loss
from buda_runtime_sim.tensor import Tensor
from buda_runtime_sim.verify import pcc

FLOAT32 = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                         math_fidelity=MathFidelity.HiFi4)


def _run(module, prediction, target):
    with context.use(context.ExecutionContext(numerics=FLOAT32)):
        p, t = Tensor.from_array(prediction.numpy()), Tensor.from_array(target.numpy())
        value = float(module(p, t).numpy().reshape(()))
        grad = module.backward(p, t, np.float32(2.0))[0].numpy()
    return value, grad


@pytest.mark.parametrize("module, torch_loss, target", [
    (loss.L1Loss("l1"), torch.nn.L1Loss(), lambda: torch.randn(8, 4)),
    (loss.L1Loss("l1s", reduction="sum"), torch.nn.L1Loss(reduction="sum"), lambda: torch.randn(8, 4)),
    (loss.MSELoss("mse"), torch.nn.MSELoss(), lambda: torch.randn(8, 4)),
    (loss.CrossEntropyLoss("ce"), torch.nn.CrossEntropyLoss(), lambda: torch.randint(0, 4, (8,))),
    (loss.CrossEntropyLoss("ce_p"), torch.nn.CrossEntropyLoss(), lambda: torch.softmax(torch.randn(8, 4), -1)),
    (loss.NLLLoss("nll"), torch.nn.NLLLoss(), lambda: torch.randint(0, 4, (8,))),
])
def test_loss_and_gradient_match_torch(module, torch_loss, target):
    torch.manual_seed(0)
    prediction = torch.randn(8, 4)
    if isinstance(module, loss.NLLLoss):
        prediction = torch.log_softmax(prediction, -1)
    target = target()
    leaf = prediction.clone().requires_grad_()
    expected = torch_loss(leaf, target)
    (expected * 2.0).backward()
    value, grad = _run(module, prediction, target)
    assert value == pytest.approx(expected.item(), rel=5e-3)
    assert grad.shape == (8, 4) and pcc(grad, leaf.grad) >= 0.999
    assert np.abs(grad - leaf.grad.numpy()).max() <= 1e-2 * np.abs(leaf.grad.numpy()).max()


def test_loss_errors_name_the_problem():
    with pytest.raises(ValueError, match="reduction must be 'mean' or 'sum'"):
        loss.L1Loss("l1", reduction="none")
    with pytest.raises(ValueError, match=r"target has shape \(8, 3\), the prediction \(8, 4\)"):
        _run(loss.MSELoss("mse"), torch.randn(8, 4), torch.randn(8, 3))
    with pytest.raises(ValueError, match=r"class indices must be in \[0, 4\)"):
        _run(loss.CrossEntropyLoss("ce"), torch.randn(8, 4), torch.full((8,), 7))
