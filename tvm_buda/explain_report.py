"""What `explain` found, per op: the data (JSON-able) and its text form.

An Explanation says which stage a model reached (import, graph passes, partition, codegen, build,
run) and, if one failed, its error and the op it names; then every op in execution order with
where it runs (device program or host), its shapes and formats, and after a run how its device
output compares with the same program in float32 (PyBuda's rule: allclose with atol = 0.1 *
max|reference|, or PCC >= 0.99); and the model's outputs against the framework's.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

STAGES = ("import", "graph passes", "partition", "codegen", "build", "run")


@dataclass
class OpReport:
    placement: str                          # "device" or "host"
    program: str                            # generated module name (device ops), "" on the host
    name: str                               # op name in the generated code (host: the Relax op)
    op_type: str                            # PyBuda op (device) or Relax op (host)
    source_op: str = ""                     # the Relax op a device op came from
    input_shapes: list = field(default_factory=list)
    output_shape: list = field(default_factory=list)
    output_df: str = ""                     # device: output format, accumulation format, fidelity
    accumulate_df: str = ""
    math_fidelity: str = ""
    pcc: float | None = None                # device output vs the same program in float32
    max_error: float | None = None
    atol: float | None = None
    passed: bool | None = None
    nonfinite: int = 0                      # inf/NaN in the device output

    @property
    def where(self) -> str:
        return f"{self.program}/{self.name}" if self.program else f"host/{self.name}"

    def formats(self) -> str:
        if self.placement != "device" or not self.output_df:
            return "float32 (TVM)" if self.placement == "host" else ""
        return f"{self.output_df} acc {self.accumulate_df} {self.math_fidelity}"

    def line(self) -> str:
        shapes = ", ".join(str(list(s)) for s in self.input_shapes)
        source = f" <- {self.source_op}" if self.source_op and self.source_op != self.op_type else ""
        text = f"{self.placement:<6} {self.where:<40} {self.op_type}{source} ({shapes}) -> {list(self.output_shape)}"
        text += f"  {self.formats()}" if self.formats() else ""
        if self.pcc is not None or self.max_error is not None:
            verdict = "ok" if self.passed else "DEPARTS"
            text += f"  {verdict} pcc={_number(self.pcc)} max_err={_number(self.max_error)} (atol {_number(self.atol)})"
        if self.nonfinite:
            text += f"  {self.nonfinite} inf/NaN"
        return text


@dataclass
class OutputReport:
    index: int
    shape: list
    pcc: float
    max_error: float
    atol: float
    passed: bool
    float32_pcc: float | None = None        # the programs run in float32, against the framework
    float32_passed: bool | None = None


@dataclass
class Explanation:
    model: str
    framework: str = ""
    stage: str = "run"                      # the stage reached: the failing one, or "run" when all ran
    error: str | None = None                # the failing stage's error
    error_type: str | None = None
    failing_ops: list = field(default_factory=list)   # ops the error names (import: unsupported ops)
    ops: list = field(default_factory=list)            # OpReport, in execution order
    outputs: list = field(default_factory=list)        # OutputReport, when a framework reference was given
    first_departure: OpReport | None = None
    verdict: str = ""

    @property
    def failed(self) -> bool:
        return self.error is not None or any(not o.passed for o in self.outputs)

    def to_dict(self) -> dict:
        return asdict(self)

    def format(self, max_ops: int | None = None) -> str:
        lines = [f"model {self.model!r}" + (f" ({self.framework})" if self.framework else "")]
        if self.error is not None:
            lines.append(f"FAILED at stage '{self.stage}': {self.error_type}: {self.error}")
            if self.failing_ops:
                lines.append(f"  op(s) named: {', '.join(self.failing_ops)}")
        else:
            lines.append(f"every stage ran ({', '.join(STAGES[:STAGES.index(self.stage) + 1])})")
        for out in self.outputs:
            verdict = "PASS" if out.passed else "FAIL"
            line = (f"  output {out.index} {out.shape}: {verdict} against the framework: pcc={_number(out.pcc)} "
                    f"max_err={_number(out.max_error)} (atol {_number(out.atol)})")
            if out.float32_pcc is not None:
                line += f"; in float32: pcc={_number(out.float32_pcc)}"
            lines.append(line)
        if self.first_departure is not None:
            lines.append(f"first op departing from the same program in float32: {self.first_departure.line().strip()}")
        if self.verdict:
            lines.append(f"verdict: {self.verdict}")
        if self.ops:
            device = sum(op.placement == "device" for op in self.ops)
            lines.append(f"ops in execution order ({device} on the device, {len(self.ops) - device} on the host):")
            shown = self.ops if max_ops is None else self.ops[:max_ops]
            lines.extend(f"  {op.line()}" for op in shown)
            if len(shown) < len(self.ops):
                lines.append(f"  ... {len(self.ops) - len(shown)} more")
        return "\n".join(lines)

    __str__ = format


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    return f"{value:.5g}"
