"""Training the same model on the simulator and in PyTorch, and comparing loss curves and weights."""

from __future__ import annotations

import copy
import queue

import numpy as np
import torch

import pybuda


def mlp(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def regression_data(steps: int, batch: int = 8, seed: int = 1):
    """A synthetic regression task: y = tanh(x @ w) + noise."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(16, 4, generator=g)
    xs = [torch.randn(batch, 16, generator=g) for _ in range(steps)]
    ys = [torch.tanh(x @ w) + 0.1 * torch.randn(batch, 4, generator=g) for x in xs]
    return xs, ys


def train_on_device(model, xs, ys, optimizer, loss_module=None, loss_on_tt: bool = False, arch=None, **run_kwargs):
    """PyBuda's canonical shape: the model on tt0, the loss on cpu0 (or on tt0); returns the losses."""
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("model", model), optimizer=optimizer, arch=arch)
    loss_module = loss_module or pybuda.PyTorchModule("loss", torch.nn.L1Loss())
    last = tt0
    if loss_on_tt:
        tt0.place_loss_module(loss_module)
    else:
        last = pybuda.CPUDevice("cpu0")
        last.place_loss_module(loss_module)
    for x, y in zip(xs, ys):
        tt0.push_to_inputs(x)
        last.push_to_target_inputs(y)
    loss_q = queue.Queue()
    checkpoints = pybuda.run_training(steps=len(xs) // run_kwargs.get("accumulation_steps", 1), loss_queue=loss_q,
                                      **run_kwargs)
    losses = [float(loss_q.get()[0].value()) for _ in range(loss_q.qsize())]
    return losses, checkpoints


def train_in_torch(model, xs, ys, make_optimizer, loss_fn=torch.nn.functional.l1_loss) -> list[float]:
    optimizer = make_optimizer(model.parameters())
    losses = []
    for x, y in zip(xs, ys):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def max_relative_difference(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12)))


def weight_pccs(model, reference) -> dict[str, float]:
    out = {}
    ref = dict(reference.named_parameters())
    for name, p in model.named_parameters():
        a, b = p.detach().numpy().ravel(), ref[name].detach().numpy().ravel()
        out[name] = 1.0 if np.allclose(a, b) else float(np.corrcoef(a, b)[0, 1])
    return out


def twin(model):
    return copy.deepcopy(model)
