"""Training on the device pipeline: initialize_pipeline(training=True), run_forward (training),
run_backward, run_optimizer, run_training, get_parameter_gradients.

A training session holds one entry per device: its trainers (one per placed module, plus the
loss), its optimizer and scheduler. Forward passes keep their records until run_backward
consumes them, oldest first; gradients flow from the loss back through every trainer and
accumulate until a backward with zero_grad=True.
"""

from __future__ import annotations

import collections
import queue
from dataclasses import dataclass, field

import numpy as np

from ..tensor import Tensor, _to_numpy
from . import device_pipeline, registry
from .gc_pacing import fewer_young_collections
from .trainers import Trainer, make_trainer


@dataclass
class DeviceSession:
    device: object
    trainers: list[Trainer]
    loss: Trainer | None = None
    optimizer: object = None          # pybuda optimizer (TTDevice) or torch optimizer (CPUDevice optimizer_f)
    scheduler: object = None
    prepared: bool = False

    @property
    def all_trainers(self) -> list[Trainer]:
        return self.trainers + ([self.loss] if self.loss is not None else [])


@dataclass
class Session:
    devices: list[DeviceSession]
    output_queue: queue.Queue
    checkpoint_queue: queue.Queue
    pending: collections.deque = field(default_factory=collections.deque)
    optimizer_steps: int = 0
    microbatch_count: int = 1         # forward passes that may wait for their backward (buffered intermediates)
    d2d_fwd: list = field(default_factory=list)   # d2d_fwd_queues: activations crossing devices
    d2d_bwd: list = field(default_factory=list)   # d2d_bwd_queues: gradients crossing devices back


_session: Session | None = None


def is_training() -> bool:
    return _session is not None


def reset() -> None:
    global _session
    _session = None


def _require_session(what: str) -> Session:
    if _session is None:
        raise RuntimeError(f"{what} needs a pipeline initialized for training; call "
                           "pybuda.initialize_pipeline(training=True, ...) first (or use pybuda.run_training)")
    return _session


# ---- set-up ---------------------------------------------------------------------------------
def initialize_training(output_queue=None, checkpoint_queue=None, sample_inputs=(), sample_targets=(),
                        microbatch_count: int = 1, d2d_fwd_queues=(), d2d_bwd_queues=()) -> queue.Queue:
    """Build the session; compile every module now if sample inputs are given or already queued."""
    global _session
    pipeline = device_pipeline.stages(registry.registered_devices(),
                                      lambda d: bool(d.modules) or d.loss_module is not None)
    if not pipeline:
        raise RuntimeError("no module has been placed on any device; place a module and a loss module first")
    losses = [d for d in pipeline if d.loss_module is not None]
    if not losses:
        raise RuntimeError("training needs a loss: call place_loss_module(...) on the last device of the pipeline "
                           "(a pybuda.op.loss module, or PyTorchModule('loss', torch.nn.L1Loss()) on a CPUDevice)")
    if losses[0] is not pipeline[-1] or len(losses) > 1:
        raise RuntimeError(f"the loss module must be on the last device of the pipeline ({pipeline[-1].name}), "
                           f"found on {', '.join(d.name for d in losses)}")
    sessions = [DeviceSession(d, [make_trainer(d, m) for m in d.modules],
                              make_trainer(d, d.loss_module, is_loss=True) if d.loss_module is not None else None)
                for d in pipeline]
    d2d_fwd = device_pipeline.check_d2d_queues("d2d_fwd_queues", d2d_fwd_queues, pipeline)
    d2d_bwd = device_pipeline.check_d2d_queues("d2d_bwd_queues", d2d_bwd_queues, pipeline)
    _session = Session(sessions, output_queue if output_queue is not None else queue.Queue(),
                       checkpoint_queue if checkpoint_queue is not None else queue.Queue(),
                       microbatch_count=microbatch_count, d2d_fwd=d2d_fwd, d2d_bwd=d2d_bwd)
    first = pipeline[0]
    inputs = sample_inputs if _given(sample_inputs) else (first.input_queue[0] if first.input_queue else None)
    targets_q = getattr(pipeline[-1], "target_input_queue", None)
    targets = sample_targets if _given(sample_targets) else (targets_q[0] if targets_q else None)
    if inputs is not None and targets is not None:
        _forward_one(_session, _as_values(inputs), tuple(_as_values(targets)), keep=False)
    return _session.checkpoint_queue


def _given(value) -> bool:
    return value is not None and not (isinstance(value, (tuple, list)) and len(value) == 0)


def _as_values(values) -> tuple:
    if isinstance(values, dict):
        return tuple(values.values())
    return tuple(values) if isinstance(values, (tuple, list)) else (values,)


def _prepare_device(ds: DeviceSession) -> None:
    """Bind the device's optimizer once every trainer on it is compiled."""
    names = [n for t in ds.trainers for n in t.trainable]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{ds.device.name}: parameter name(s) {duplicates} appear in more than one module; "
                         "place modules with distinct parameter names")
    device = ds.device
    optimizer = getattr(device, "optimizer", None)
    if optimizer is not None:
        if not names:
            raise ValueError(f"{device.name}: an optimizer was given but no module on the device has trainable "
                             "parameters (requires_grad=True); remove the optimizer or make parameters trainable")
        optimizer.bind(names)
        ds.optimizer, ds.scheduler = optimizer, getattr(device, "scheduler", None)
    optimizer_f = getattr(device, "optimizer_f", None)
    if optimizer_f is not None:
        trainable = [t for t in ds.trainers if t.trainable]
        if len(trainable) != 1:
            raise ValueError(f"{device.name}: optimizer_f needs exactly one module with trainable parameters on the "
                             f"device, found {len(trainable)}")
        ds.optimizer = optimizer_f(trainable[0].torch_module)
        scheduler_f = getattr(device, "scheduler_f", None)
        ds.scheduler = scheduler_f(ds.optimizer) if scheduler_f is not None else None
    ds.prepared = True


# ---- forward --------------------------------------------------------------------------------
def _forward_one(session: Session, values: tuple, targets: tuple | None, keep: bool = True):
    records = []
    upstream_trainable = False
    for index, ds in enumerate(session.devices):
        if index and ds.trainers:
            device_pipeline.check_counts(session.devices[index - 1].device, values, ds.device, ds.trainers[0].module)
        for trainer in ds.trainers:
            if not ds.prepared:
                trainer.prepare(values, len(values) if upstream_trainable else 0)
            outputs, record = trainer.forward(values)
            records.append((trainer, record, len(values)))
            upstream_trainable = upstream_trainable or bool(trainer.trainable)
            values = outputs
        if ds.loss is not None:
            if targets is None:
                raise RuntimeError(f"{ds.device.name}: no training targets queued for this input; push them with "
                                   f"{ds.device.name}.push_to_target_inputs(...)")
            _check_targets(ds, values, targets)
            if not ds.prepared:
                ds.loss.prepare(values + targets, len(values) if upstream_trainable else 0)
            n_pred = len(values)
            values, record = ds.loss.forward(values + targets)
            records.append((ds.loss, record, n_pred))
        if not ds.prepared:
            _prepare_device(ds)
        if keep and session.d2d_fwd and index < len(session.devices) - 1:
            session.d2d_fwd[index].put(device_pipeline.as_tensors(values))
    if keep:
        session.pending.append(records)
    return values


def _check_targets(ds: DeviceSession, predictions: tuple, targets: tuple) -> None:
    elementwise = getattr(ds.device.loss_module, "elementwise", None)
    if elementwise is None:  # a torch loss: L1Loss, MSELoss, ... compare elementwise
        inner = getattr(ds.device.loss_module, "framework_module", None)
        elementwise = type(inner).__name__ in ("L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "BCELoss",
                                               "BCEWithLogitsLoss")
    if elementwise:
        for i, (p, t) in enumerate(zip(predictions, targets)):
            if tuple(p.shape) != tuple(t.shape):
                raise ValueError(f"{ds.device.name}: target #{i} has shape {tuple(t.shape)} but the model output it "
                                 f"is compared with has shape {tuple(p.shape)}; push targets shaped like the output")


def run_forward(input_count: int = 1, loss_queue: queue.Queue | None = None) -> None:
    session = _require_session("run_forward")
    first = session.devices[0].device
    last = session.devices[-1].device
    if len(first.input_queue) < input_count:
        raise RuntimeError(f"{input_count} input(s) requested but {len(first.input_queue)} queued on {first.name}; "
                           "push inputs with device.push_to_inputs(...)")
    targets_q = getattr(last, "target_input_queue", collections.deque())
    if len(targets_q) < input_count:
        raise RuntimeError(f"{input_count} input(s) requested but {len(targets_q)} target(s) queued on {last.name}; "
                           f"push targets with {last.name}.push_to_target_inputs(...)")
    if len(session.pending) + input_count > session.microbatch_count:
        raise RuntimeError(f"run_forward({input_count}) would leave {len(session.pending) + input_count} forward "
                           f"pass(es) waiting for run_backward, but the pipeline buffers microbatch_count="
                           f"{session.microbatch_count}; call run_backward first, or initialize_pipeline(training=True, "
                           "microbatch_count=...) with a larger count")
    out = loss_queue if loss_queue is not None else session.output_queue
    for _ in range(input_count):
        values = _as_values(first.input_queue.popleft())
        loss = _forward_one(session, values, tuple(targets_q.popleft()))
        out.put([Tensor.from_array(np.asarray(_to_numpy(v), dtype=np.float32)) for v in loss])


# ---- backward -------------------------------------------------------------------------------
def run_backward(input_count: int = 1, zero_grad: bool = False) -> None:
    session = _require_session("run_backward")
    if zero_grad:
        _zero_grad(session)
    for _ in range(input_count):
        if not session.pending:
            raise RuntimeError("run_backward before run_forward: no forward pass is waiting for its backward; call "
                               "pybuda.run_forward(input_count=...) first (one backward per forward input)")
        records = session.pending.popleft()
        grads = None
        stage = {id(ds.device): i for i, ds in enumerate(session.devices)}
        for k in range(len(records) - 1, -1, -1):
            trainer, record, n_inputs = records[k]
            if grads is None:  # the loss: d loss / d loss = 1
                grads = (np.ones((), dtype=np.float32),)
            grads = trainer.backward(record, grads)[:n_inputs]
            records[k] = record = None      # its saved activations are consumed: freed now, not after every stage
            if not grads or all(g is None for g in grads):
                break
            j = stage[id(trainer.device)]
            if session.d2d_bwd and j and (k == 0 or records[k - 1][0].device is not trainer.device):
                session.d2d_bwd[j - 1].put(device_pipeline.as_tensors(grads))  # crossing back to stage j - 1


def _zero_grad(session: Session) -> None:
    for ds in session.devices:
        for t in ds.all_trainers:
            t.zero_grad()


def device_gradients(device) -> dict:
    ds = _device_session(device)
    out = {}
    for t in ds.trainers:
        out.update({k: Tensor.from_array(v) for k, v in t.gradients().items()})
    return out


def get_parameter_gradients(device=None, _sequential: bool = False):
    """Accumulated gradients: a dict for `device`, else a list with one dict per device."""
    session = _require_session("get_parameter_gradients")
    if device is not None:
        return device_gradients(device)
    return [device_gradients(ds.device) for ds in session.devices]


def _device_session(device) -> DeviceSession:
    session = _require_session("reading gradients")
    for ds in session.devices:
        if ds.device is device:
            return ds
    raise ValueError(f"{getattr(device, 'name', device)} is not part of the training pipeline")


# ---- parameters and optimizer -----------------------------------------------------------------
def device_parameters(device) -> dict | None:
    """Parameter values of a device in the training session (None if it is not training)."""
    if _session is None or not any(ds.device is device for ds in _session.devices):
        return None
    out = {}
    for t in _device_session(device).trainers:
        out.update({k: Tensor.from_array(v) for k, v in t.parameters().items()})
    return out


def update_parameters(device, values: dict) -> bool:
    """Push parameter values onto a training device; False if the device is not training."""
    if device_parameters(device) is None:
        return False
    arrays = {k: _to_numpy(v) for k, v in values.items()}
    for t in _device_session(device).trainers:
        t.apply(arrays)
    return True


def run_optimizer(checkpoint: bool = False, _sequential: bool = False) -> None:
    session = _require_session("run_optimizer")
    for ds in session.devices:
        if ds.optimizer is None:
            continue
        if hasattr(ds.optimizer, "bind"):  # a pybuda optimizer: the device holds values and gradients
            params, grads = {}, {}
            for t in ds.trainers:
                params.update(t.parameters())
                grads.update(t.gradients())
            new = ds.optimizer.step(params, grads)
            for t in ds.trainers:
                t.apply(new)
        else:  # a torch optimizer on a CPUDevice
            ds.optimizer.step()
    session.optimizer_steps += 1
    if checkpoint:
        session.checkpoint_queue.put(_checkpoint(session))


def _checkpoint(session: Session) -> list[dict]:
    """Every session device's parameters (what get_parameter_checkpoint gives for a training device)."""
    return [device_parameters(ds.device) for ds in session.devices]


def step_schedulers() -> None:
    for ds in _require_session("stepping schedulers").devices:
        if ds.scheduler is not None:
            ds.scheduler.step()


# ---- the all-in-one loop ------------------------------------------------------------------------
def run_training(epochs: int = 1, steps: int = 1, accumulation_steps: int = 1, microbatch_count: int = 1,
                 checkpoint_queue: queue.Queue | None = None, loss_queue: queue.Queue | None = None,
                 checkpoint_interval: int = 0, _sequential: bool = False, _perf_trace: bool = False,
                 _verify_cfg=None) -> queue.Queue:
    """Train: per step, accumulation_steps x (forward + backward of microbatch_count inputs), then the
    optimizer. Gradients add up over a step (sum, as torch accumulates .grad). Schedulers step after
    every epoch. Returns the checkpoint queue: a checkpoint every checkpoint_interval optimizer
    steps (one dict per device), then the final weights."""
    counts = {"epochs": epochs, "steps": steps, "accumulation_steps": accumulation_steps,
              "microbatch_count": microbatch_count}
    for key, value in counts.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"run_training: {key} must be a positive integer, got {value!r}")
    if not isinstance(checkpoint_interval, int) or checkpoint_interval < 0:
        raise ValueError(f"run_training: checkpoint_interval must be a non-negative integer, got {checkpoint_interval!r}")
    if _session is None:
        initialize_training(checkpoint_queue=checkpoint_queue)
    elif checkpoint_queue is not None:
        _session.checkpoint_queue = checkpoint_queue
    session = _session
    session.microbatch_count = max(session.microbatch_count, microbatch_count)
    needed = epochs * steps * accumulation_steps * microbatch_count
    first, last = session.devices[0].device, session.devices[-1].device
    have_targets = len(getattr(last, "target_input_queue", ()))
    if len(first.input_queue) < needed or have_targets < needed:
        raise RuntimeError(f"run_training needs {needed} inputs and targets (epochs x steps x accumulation_steps x "
                           f"microbatch_count); {len(first.input_queue)} input(s) are queued on {first.name} and "
                           f"{have_targets} target(s) on {last.name}")
    with fewer_young_collections():
        for _ in range(epochs):
            for _ in range(steps):
                for acc in range(accumulation_steps):
                    run_forward(microbatch_count, loss_queue)
                    run_backward(microbatch_count, zero_grad=(acc == 0))
                due = checkpoint_interval and (session.optimizer_steps + 1) % checkpoint_interval == 0
                run_optimizer(checkpoint=bool(due))
            step_schedulers()
    session.checkpoint_queue.put(_checkpoint(session))
    return session.checkpoint_queue
