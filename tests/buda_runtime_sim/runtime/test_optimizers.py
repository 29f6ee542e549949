"""pybuda.optimizers and pybuda.schedulers against torch.optim (host path) and on the device path."""

import numpy as np
import pytest
import torch

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.runtime.optimizers import LAMB, SGD, Adam, AdamW
from buda_runtime_sim.runtime.schedulers import LearningRateScheduler, LinearWarmup


def _trajectory(optimizer, torch_make=None, steps: int = 5):
    """Run `steps` updates of one parameter with a fixed gradient sequence; with torch_make, the same in torch."""
    g = torch.Generator().manual_seed(0)
    start = torch.randn(6, 32, generator=g)
    grads = [torch.randn(6, 32, generator=g) for _ in range(steps)]
    values = {"w": start.numpy().copy()}
    optimizer.bind(["w"])
    for grad in grads:
        values.update(optimizer.step(values, {"w": grad.numpy()}))
    if torch_make is None:
        return values["w"], start, grads
    p = torch.nn.Parameter(start.clone())
    opt = torch_make([p])
    for grad in grads:
        p.grad = grad.clone()
        opt.step()
    return values["w"], p.detach().numpy()


@pytest.mark.parametrize("make, torch_make", [
    (lambda: SGD(0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    (lambda: SGD(0.1, momentum=0.9, weight_decay=0.01), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9,
                                                                                  weight_decay=0.01)),
    (lambda: Adam(0.01), lambda p: torch.optim.Adam(p, lr=0.01)),
    (lambda: Adam(0.01, weight_decay=0.1), lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1)),
    (lambda: AdamW(0.01, weight_decay=0.1), lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1)),
    (lambda: Adam(0.01, enable_adam_w=True, weight_decay=0.1), lambda p: torch.optim.AdamW(p, lr=0.01,
                                                                                           weight_decay=0.1)),
])
def test_host_optimizers_match_torch_optim(make, torch_make):
    got, expected = _trajectory(make(), torch_make)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_lamb_matches_its_definition():
    got, start, grads = _trajectory(LAMB(0.01, weight_decay=0.01))
    p, m, v = start.numpy().astype(np.float64), 0.0, 0.0
    for t, g in enumerate(grads, 1):
        g = g.numpy().astype(np.float64)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        update = (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-6) + 0.01 * p
        trust = min(max(np.linalg.norm(p), 0.0), 10.0) / np.linalg.norm(update)
        p = p - 0.01 * trust * update
    np.testing.assert_allclose(got, p, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("make, torch_make", [
    (lambda **f: Adam(0.01, device_params=True, **f), lambda p: torch.optim.Adam(p, lr=0.01)),
    (lambda **f: SGD(0.1, momentum=0.9, device_params=True, **f), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    (lambda **f: LAMB(0.01, device_params=True, **f), None),
])
def test_device_optimizers_run_in_their_formats(make, torch_make):
    """device_params=True: the same rule as simulator ops, Float32/HiFi4 by default (close to float32:
    the FPU multiplies TF32 operands in fidelity phases, ~0.2% per multiply, spec/numerics.md),
    Float16_b if asked (visibly rounded, still the same update)."""
    if torch_make is None:  # LAMB: the host path is the reference
        expected, _, _ = _trajectory(LAMB(0.01))
    else:
        _, expected = _trajectory(make(), torch_make)
    fp32, _, _ = _trajectory(make())
    bf16, _, _ = _trajectory(make(optimizer_df=DataFormat.Float16_b))
    assert np.abs(fp32 - expected).max() <= 3e-3 * np.abs(expected).max()
    assert np.abs(bf16 - expected).max() > np.abs(fp32 - expected).max()
    assert np.corrcoef(bf16.ravel(), expected.ravel())[0, 1] >= 0.99


def test_state_dict_round_trip_continues_identically():
    first = Adam(0.01)
    values = {"w": np.ones((4, 4), np.float32)}
    grads = {"w": np.full((4, 4), 0.5, np.float32)}
    values.update(first.step(values, grads))
    second = Adam(0.5)
    second.load_state_dict(first.state_dict())
    assert second.learning_rate == 0.01 and second.step_count == 1
    np.testing.assert_array_equal(first.step(dict(values), grads)["w"], second.step(dict(values), grads)["w"])


def test_linear_warmup_and_scheduler_base():
    optimizer = SGD(1.0)
    scheduler = LinearWarmup(optimizer, warmup_steps=3, total_steps=7)
    rates = [optimizer.learning_rate] + [scheduler.step() for _ in range(7)]
    np.testing.assert_allclose(rates, [0.25, 0.5, 0.75, 1.0, 0.75, 0.5, 0.25, 0.0])
    assert LearningRateScheduler(SGD(0.3)).step() == 0.3
    with pytest.raises(TypeError, match="expected a pybuda optimizer"):
        LinearWarmup(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0), 2)


def test_optimizer_errors_name_the_problem():
    with pytest.raises(ValueError, match="learning_rate must be a non-negative number"):
        SGD(-1.0)
    with pytest.raises(ValueError, match="no trainable parameters"):
        SGD(0.1).bind([])
    with pytest.raises(KeyError, match=r"\['nope'\] are not trainable"):
        SGD(0.1, parameters=["nope"]).bind(["w"])
    with pytest.raises(ValueError, match="gradient of w has shape"):
        SGD(0.1).step({"w": np.ones((2, 2))}, {"w": np.ones((3, 2))})
