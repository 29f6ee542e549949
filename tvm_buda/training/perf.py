"""perf_report(training=True): the perf model over one training step, forward + backward + optimizer.

Forward and backward are the compiled device graphs (tvm_buda.perf_report on each). The
optimizer's cost follows its own update rule: the rule is run once per parameter on a counting
backend, and every arithmetic op it issues becomes an elementwise device op on the parameter's
shape, in the optimizer's formats (`device_params=True`). A host optimizer (PyBuda's default)
costs no device ops but moves every gradient to the host and every new weight back over PCIe.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.perf import HostTransfer, OpGraph, PerfOp, PerfReport, PlacementConfig, estimate
from buda_runtime_sim.runtime.optimizers import SGD

from ..perf_report import perf_report


class _Counted:
    """A value of the counting backend: arithmetic records one op and yields another value."""

    def __init__(self, math, shape):
        self.math, self.shape = math, shape

    def _op(self, op_type, other=None):
        return self.math.record(op_type, self.shape)

    __add__ = __radd__ = lambda self, other: self._op("Add", other)
    __sub__ = __rsub__ = lambda self, other: self._op("Subtract", other)
    __mul__ = __rmul__ = lambda self, other: self._op("Multiply", other)
    __truediv__ = __rtruediv__ = lambda self, other: self._op("Divide", other)
    __neg__ = lambda self: self._op("Multiply")


class CountingMath:
    """Records the ops an optimizer rule issues (what DeviceMath would run), computes nothing."""

    def __init__(self):
        self.ops: list[tuple[str, tuple]] = []

    def record(self, op_type: str, shape: tuple) -> _Counted:
        self.ops.append((op_type, shape))
        return _Counted(self, shape)

    def value(self, array):
        return _Counted(self, tuple(np.shape(array)))

    def sqrt(self, x):
        return self.record("Sqrt", x.shape)

    def norm(self, x):
        self.record("Multiply", x.shape)
        self.record("ReduceSum", x.shape)
        return self.record("Sqrt", (1, 1))

    def array(self, x):
        return np.ones(1, np.float32)


def optimizer_op_graph(optimizer, shapes: dict[str, tuple], name: str) -> OpGraph:
    """The device ops (or host transfers) of one optimizer step over parameters of these shapes."""
    if not optimizer.device_params:
        transfers = [HostTransfer(f"{p}:grad", "d2h", s, DataFormat.Float32) for p, s in shapes.items()]
        transfers += [HostTransfer(f"{p}:weight", "h2d", s, DataFormat.Float32) for p, s in shapes.items()]
        return OpGraph([], set(), transfers, 1, name)
    df = getattr(optimizer.math, "data_format", DataFormat.Float32)
    fidelity = getattr(optimizer.math, "math_fidelity", MathFidelity.HiFi4)
    ops = []
    for param, shape in shapes.items():
        counter = CountingMath()
        state = {k: counter.value(np.zeros(shape)) for k in optimizer.state_keys}
        hp = dict(optimizer.hyper, lr=optimizer.learning_rate)
        type(optimizer).rule(counter, counter.value(np.zeros(shape)), counter.value(np.zeros(shape)), state, 1, hp)
        for i, (op_type, op_shape) in enumerate(counter.ops):
            ops.append(PerfOp(f"{param}.{op_type.lower()}_{i}", op_type, (op_shape, op_shape), op_shape,
                              data_format=df, math_fidelity=fidelity, attrs={"dim": -1} if op_type == "ReduceSum"
                              else {}))
    return OpGraph(ops, set(), [], 1, name)


@dataclass
class TrainingPerfReport:
    """Estimated time of one training step (one microbatch through forward, backward, optimizer)."""

    model: str
    forward: PerfReport
    backward: PerfReport
    optimizer: PerfReport

    @property
    def seconds(self) -> float:
        return self.forward.seconds + self.backward.seconds + self.optimizer.seconds

    @property
    def samples_per_second(self) -> float:
        return self.forward.microbatch / self.seconds if self.seconds else float("inf")

    def summary(self) -> str:
        parts = [("forward", self.forward), ("backward", self.backward), ("optimizer", self.optimizer)]
        lines = [f"training step of {self.model} on {self.forward.board.name}: "
                 f"{1e3 * self.seconds:.3f} ms per microbatch of {self.forward.microbatch}, "
                 f"{self.samples_per_second:,.1f} samples/s"]
        lines += [f"  {label:<9} {1e3 * r.seconds:9.3f} ms  ({len(r.ops)} ops, {len(r.epochs)} epoch(s))"
                  for label, r in parts]
        return "\n".join(lines)

    __str__ = summary


def training_perf_report(trainable, device_config: str | None = None, microbatch: int | None = None,
                         optimizer=None, **placement) -> TrainingPerfReport:
    """The perf model over a TrainableModel's forward and backward graphs and `optimizer`'s
    update of its trainable parameters (SGD on the host if not given)."""
    if trainable.backward_model is None:
        raise ValueError(f"{trainable.name}: nothing trains (no parameter requires a gradient)")
    optimizer = optimizer or SGD(0.0)
    forward = perf_report(trainable.forward_model, device_config, microbatch, **placement)
    backward = perf_report(trainable.backward_model, device_config, microbatch, **placement)
    shapes = {n: tuple(np.shape(trainable.params[n])) for n in trainable.trainable}
    config = PlacementConfig.from_compiler_config(trainable.forward_model.config).with_options(
        device_config=device_config)
    step = estimate(optimizer_op_graph(optimizer, shapes, f"{trainable.name}_optimizer"), config, 1)
    return TrainingPerfReport(trainable.name, forward, backward, step)


def training_perf_report_for(compiled, device_config=None, microbatch=None, optimizer=None,
                             **placement) -> TrainingPerfReport:
    """`CompiledModel.perf_report(training=True)`: compile its training graphs (every float weight
    trains) and estimate one step."""
    from .trainable import TrainableModel

    imported = compiled.imported
    if imported.mod is None:
        raise ValueError(f"{compiled.name}: loaded from the compile cache without its graph; compile with "
                         "PYBUDA_ENABLE_TVM_CACHE=0 (or -1) to estimate training")
    trainable = [n for n, v in imported.params.items() if np.asarray(v).dtype.kind == "f"]
    model = TrainableModel(imported, trainable, compiled.config)
    return training_perf_report(model, device_config, microbatch, optimizer, **placement)
