"""What runs where, in execution order: the partition report of a compiled model.

Built once from the partitioned IRModule and stored as JSON in cache entries, so a warm start
reports the same thing without TVM.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path



@dataclass
class Step:
    kind: str                     # "host" or "device"
    op: str                       # Relax op name (host) or generated module name (device)
    input_shapes: list = field(default_factory=list)
    output_shapes: list = field(default_factory=list)
    inputs_from: list = field(default_factory=list)  # indices of the steps producing its inputs


@dataclass
class PartitionSummary:
    steps: list[Step]
    device_ops: list[str]         # Relax op names inside device subgraphs, in generated-code order
    cpu_ops: list[str]            # Relax op names left on the host
    baked_weights: list[str] = field(default_factory=list)  # weights folded into constants at compile time

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
        return {"steps": [asdict(s) for s in self.steps], "device_ops": self.device_ops, "cpu_ops": self.cpu_ops,
                "baked_weights": self.baked_weights}

    @classmethod
    def from_dict(cls, data: dict) -> "PartitionSummary":
        return cls([Step(**s) for s in data["steps"]], list(data["device_ops"]), list(data["cpu_ops"]),
                   list(data.get("baked_weights", [])))

    def to_dot(self) -> str:
        """The execution graph in graphviz dot: device steps green, host steps grey."""
        lines = ["digraph partition {", "  rankdir=TB;", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
        for i, step in enumerate(self.steps):
            colour = "#9fd89f" if step.kind == "device" else "#d9d9d9"
            label = f"{step.op}\\n{' '.join(str(tuple(s)) for s in step.output_shapes)}"
            lines.append(f'  s{i} [label="{label}", fillcolor="{colour}"];')
        for i, step in enumerate(self.steps):
            for j in step.inputs_from:
                lines.append(f"  s{j} -> s{i};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def write_graph(self, path) -> Path:
        """Write <path>.dot, and <path>.png too when graphviz's `dot` is installed; returns the file written last."""
        path = Path(path)
        dot_path = path.with_suffix(".dot")
        dot_path.parent.mkdir(parents=True, exist_ok=True)
        dot_path.write_text(self.to_dot())
        if shutil.which("dot"):
            png = path.with_suffix(".png")
            subprocess.run(["dot", "-Tpng", str(dot_path), "-o", str(png)], check=True, capture_output=True)
            return png
        return dot_path

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
    from tvm import relax

    from codegen.lower import static_shape

    ty = getattr(expr, "ty", None)
    if isinstance(ty, relax.TupleType):
        return [list(static_shape(f)) for f in expr.fields] if isinstance(expr, relax.Tuple) else [[] for _ in ty.fields]
    return [list(static_shape(expr))]


def summarize(mod: tvm.IRModule, module_names: dict, device_ops: list[str]) -> PartitionSummary:
    """module_names: device GlobalVar name -> generated module name."""
    import tvm   # compile time only: a loaded model's summary comes from_dict, without TVM's compiler
    from tvm import relax

    from codegen.lower import static_shape

    from .fallback import vars_in
    from .op_table import call_op_name

    steps = []
    producer = {}  # Var -> index of the step that (ultimately) produced it
    main = mod["main"]
    for block in main.body.blocks:
        for binding in block.bindings:
            value = binding.value
            sources = sorted({producer[v] for v in vars_in(value) if v in producer})
            if not isinstance(value, relax.Call) or not isinstance(value.op, (tvm.ir.GlobalVar, tvm.ir.Op)):
                if len(sources) == 1:  # tuple access or alias: same producer
                    producer[binding.var] = sources[0]
                continue
            ins = [list(static_shape(a)) for a in value.args if isinstance(getattr(a, "ty", None), relax.TensorType)]
            outs = _shapes(binding.var)
            if isinstance(value.op, tvm.ir.GlobalVar):
                if value.op.name_hint not in module_names:
                    continue
                steps.append(Step("device", module_names[value.op.name_hint], ins, outs, sources))
            else:
                steps.append(Step("host", call_op_name(value).removeprefix("relax."), ins, outs, sources))
            producer[binding.var] = len(steps) - 1
    cpu_ops = [s.op for s in steps if s.kind == "host"]
    return PartitionSummary(steps, device_ops, cpu_ops)
