"""ModuleGraph -> Python source of a PyBudaModule subclass, written to be read and edited."""

from __future__ import annotations

from .graph import ModuleGraph


def _literal(value) -> str:
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_literal(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def _call(line) -> str:
    args = [repr(line.name)] + list(line.inputs) + [f"{k}={_literal(v)}" for k, v in line.attrs.items()]
    return f"{line.output} = pybuda.op.{line.op}({', '.join(args)})"


def render(graph: ModuleGraph, header: str) -> str:
    """The source text; parameters and constants are declared here, their values live in the
    safetensors file of the same name beside it."""
    out = [f'"""{header}"""', "", "import pybuda", "", "", f"class {graph.class_name}(pybuda.PyBudaModule):"]
    out.append(f'    def __init__(self, name={graph.module_name!r}):')
    out.append("        super().__init__(name)")
    for name, value in graph.parameters.items():
        dims = "".join(f"{d}, " for d in value.shape)
        out.append(f"        self.{name} = pybuda.Parameter({dims}requires_grad=False, name={name!r})")
    for name, value in graph.constants.items():
        out.append(f"        self.add_constant({name!r}, shape={_literal(list(value.shape))})")
    out.append("")
    out.append(f"    def forward(self, {', '.join(graph.inputs)}):" if graph.inputs else "    def forward(self):")
    for line in graph.ops:
        out.append("        " + _call(line))
    out.append(f"        return {', '.join(graph.outputs)}")
    return "\n".join(out) + "\n"
