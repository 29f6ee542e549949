"""A pipeline of devices: the devices created, in creation order, each feeding the next.

PyBuda connects devices into a pipeline in the order they are created (user guide 001, "Devices"):
inputs are pushed into the first device, each device's outputs are the next device's inputs, and
the last device's outputs go to the output queue. Between two devices the tensors pass through
the host; `initialize_pipeline(d2d_fwd_queues=[...])` asks for a copy of them (API reference 002):

- `d2d_fwd_queues[i]` receives, for every forward pass, the list of tensors stage i sends to stage
  i + 1 (the last stage has no queue: N stages take N - 1 queues, or none);
- `d2d_bwd_queues[i]` (training) receives the gradients stage i + 1 sends back to stage i (the
  first stage has no queue), one list per backward pass, an entry None where an input got none.

A stage is a device with work on it (modules; in training also a loss module). Devices without
work before the first stage or after the last are left out (created but unused); one between two
stages is an error, as is a device whose output count the next device's first module cannot take.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from ..module import PyBudaModule
from ..tensor import Tensor
from .subgraphs import active_modules


def has_modules(device) -> bool:
    return bool(device.modules)


def stages(devices: Sequence, has_work: Callable = has_modules) -> list:
    """The active devices with work, in creation order; an idle device between two is an error."""
    active = [d for d in devices if d.active]
    busy = [i for i, d in enumerate(active) if has_work(d)]
    if not busy:
        return []
    for i in range(busy[0], busy[-1] + 1):
        if not has_work(active[i]):
            before = next(d for d in reversed(active[:i]) if has_work(d))
            after = next(d for d in active[i + 1:] if has_work(d))
            raise RuntimeError(
                f"device {active[i].name} has no module but sits between {before.name} and {after.name} in the "
                "pipeline (devices form a pipeline in creation order); place a module on it, or call "
                "pybuda.shutdown() and create only the devices that run something")
    return active[busy[0]:busy[-1] + 1]


def check_d2d_queues(kind: str, queues, pipeline: Sequence) -> list:
    """The queues as a list: none, or one per boundary between stages (N - 1 for N stages)."""
    if queues is None:
        return []
    if not isinstance(queues, (list, tuple)):
        raise TypeError(f"initialize_pipeline: {kind} must be a list of queue.Queue, got {type(queues).__name__}")
    queues = list(queues)
    boundaries = len(pipeline) - 1
    if queues and len(queues) != boundaries:
        names = " -> ".join(d.name for d in pipeline)
        raise ValueError(f"initialize_pipeline: {len(queues)} {kind} given but the pipeline {names} has "
                         f"{boundaries} device boundar{'y' if boundaries == 1 else 'ies'}; pass {boundaries} "
                         "queue(s), one per boundary in pipeline order, or none")
    for i, q in enumerate(queues):
        if not callable(getattr(q, "put", None)):
            raise TypeError(f"initialize_pipeline: {kind}[{i}] is a {type(q).__name__}, not a queue.Queue")
    return queues


def check_first(device, devices: Sequence) -> None:
    """push_to_inputs goes to the first device of the pipeline only."""
    for other in devices:
        if other is device:
            return
        if other.active and other.modules:
            raise RuntimeError(
                f"{device.name}: push_to_inputs on a device that is not first in the pipeline; push inputs to "
                f"{other.name} (devices form a pipeline in creation order and each feeds the next)")


def input_range(module) -> tuple[int, int | None] | None:
    """(fewest, most) positional inputs the module's forward takes; most is None for *args; None if unknown."""
    inner = getattr(module, "framework_module", None)
    if isinstance(module, PyBudaModule):
        fn = module.forward
    elif inner is not None and callable(getattr(inner, "forward", None)) and getattr(module, "framework", "") == "pytorch":
        fn = inner.forward
    else:
        return None
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in positional)
    variadic = any(p.kind == p.VAR_POSITIONAL for p in params)
    return required, None if variadic else len(positional)


def check_counts(sender, outputs, receiver, module) -> None:
    """The sender's output count must fit the receiving module's inputs; names both devices if not."""
    expected = input_range(module)
    if expected is None:
        return
    fewest, most = expected
    count = len(outputs)
    if count < fewest or (most is not None and count > most):
        takes = f"{fewest}" if fewest == most else f"{fewest} to {'any number' if most is None else most}"
        raise ValueError(f"{sender.name} produces {count} output(s) but {receiver.name}'s first module "
                         f"{module.name} takes {takes} input(s); each device's outputs are the next device's "
                         "inputs, so make the modules agree (or place them on one device)")


def as_tensors(values) -> list:
    """Host copies of tensors crossing a boundary (pybuda Tensors in float32, as outputs are); None stays None."""
    return [v if v is None or isinstance(v, Tensor) else Tensor.from_array(v) for v in values]


def forward(pipeline: Sequence, values, d2d_queues: Sequence = ()) -> tuple:
    """One input through every stage; the tensors crossing boundary i go to d2d_queues[i]."""
    for i, device in enumerate(pipeline):
        if i:
            check_counts(pipeline[i - 1], values, device, active_modules(device)[0])
        values = device.run_modules(values)
        if d2d_queues and i < len(pipeline) - 1:
            d2d_queues[i].put(as_tensors(values))
    return values
