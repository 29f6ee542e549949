"""What codegen knows about one device subgraph, independent of how it is printed."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class OpLine:
    """`<output> = pybuda.op.<op>("<name>", <inputs>, <attrs>)`"""

    op: str
    name: str
    output: str
    inputs: list[str]
    attrs: dict = field(default_factory=dict)
    input_shapes: list[tuple[int, ...]] = field(default_factory=list)  # static shapes, for the perf model
    output_shape: tuple[int, ...] = ()
    source_op: str = ""                                                # the Relax op it came from


@dataclass
class ModuleGraph:
    module_name: str                      # file stem and PyBudaModule name
    class_name: str
    inputs: list[str]                     # forward() arguments, in call order
    parameters: dict[str, np.ndarray]     # pybuda.Parameter, loaded from the safetensors file
    constants: dict[str, np.ndarray]      # add_constant, loaded from the same file
    ops: list[OpLine]
    outputs: list[str]
    arg_roles: list[tuple[str, str, str]]  # per Relax function parameter: (kind, name here, name in the host graph)
    source_ops: list[str] = field(default_factory=list)  # Relax op names, for reports

    def op_records(self) -> list[dict]:
        """The ops as JSON-able records, for the manifest and the content digest (field by field:
        dataclasses.asdict's deep copy cost a tenth of a second on BERT-base, twice)."""
        return [dict(vars(op)) for op in self.ops]

    def signature(self) -> dict:
        """Shapes and roles, JSON-able, for the manifest."""
        return {
            "inputs": self.inputs,
            "outputs": self.outputs,
            "arg_roles": [list(r) for r in self.arg_roles],
            "parameters": {k: list(v.shape) for k, v in self.parameters.items()},
            "constants": {k: list(v.shape) for k, v in self.constants.items()},
        }
