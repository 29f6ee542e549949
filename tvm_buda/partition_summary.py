"""What runs where, in execution order: the partition report of a compiled model.

Built once from the partitioned IRModule and stored as JSON in cache entries, so a warm start
reports the same thing without TVM.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import tvm
from tvm import relax

from codegen.lower import static_shape


@dataclass
class Step:
    kind: str                     # "host" or "device"
    op: str                       # Relax op name (host) or generated module name (device)
    input_shapes: list = field(default_factory=list)
    output_shapes: list = field(default_factory=list)


@dataclass
class PartitionSummary:
    steps: list[Step]
    device_ops: list[str]         # Relax op names inside device subgraphs, in generated-code order
    cpu_ops: list[str]            # Relax op names left on the host

    @property
    def num_device_subgraphs(self) -> int:
        return len({s.op for s in self.steps if s.kind == "device"})

    @property
    def graph_breaks(self) -> int:
        """Switches between host and device along the execution order."""
        kinds = [s.kind for s in self.steps]
        return sum(1 for a, b in zip(kinds, kinds[1:]) if a != b)

    @property
    def device_fraction(self) -> float:
        total = len(self.device_ops) + len(self.cpu_ops)
        return len(self.device_ops) / total if total else 0.0

    def to_dict(self) -> dict:
        return {"steps": [asdict(s) for s in self.steps], "device_ops": self.device_ops, "cpu_ops": self.cpu_ops}

    @classmethod
    def from_dict(cls, data: dict) -> "PartitionSummary":
        return cls([Step(**s) for s in data["steps"]], list(data["device_ops"]), list(data["cpu_ops"]))

    def __str__(self) -> str:
        lines = [
            f"device subgraphs: {self.num_device_subgraphs}, graph breaks: {self.graph_breaks}, "
            f"ops on device: {len(self.device_ops)}/{len(self.device_ops) + len(self.cpu_ops)} "
            f"({100 * self.device_fraction:.0f}%)"
        ]
        for step in self.steps:
            where = "DEVICE" if step.kind == "device" else "host  "
            lines.append(f"  {where} {step.op:<32} {step.input_shapes} -> {step.output_shapes}")
        return "\n".join(lines)


def _shapes(expr) -> list:
    ty = getattr(expr, "ty", None)
    if isinstance(ty, relax.TupleType):
        return [list(static_shape(f)) for f in expr.fields] if isinstance(expr, relax.Tuple) else [[] for _ in ty.fields]
    return [list(static_shape(expr))]


def summarize(mod: tvm.IRModule, module_names: dict, device_ops: list[str]) -> PartitionSummary:
    """module_names: device GlobalVar name -> generated module name."""
    steps = []
    main = mod["main"]
    for block in main.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if not isinstance(value, relax.Call):
                continue
            ins = [list(static_shape(a)) for a in value.args if isinstance(getattr(a, "ty", None), relax.TensorType)]
            outs = _shapes(binding.var)
            if isinstance(value.op, tvm.ir.GlobalVar) and value.op.name_hint in module_names:
                steps.append(Step("device", module_names[value.op.name_hint], ins, outs))
            elif isinstance(value.op, tvm.ir.Op):
                steps.append(Step("host", value.op.name.removeprefix("relax."), ins, outs))
    cpu_ops = [s.op for s in steps if s.kind == "host"]
    return PartitionSummary(steps, device_ops, cpu_ops)
