"""CompiledModel: a model compiled for the buda backend, ready to run on the simulator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tvm
from tvm import relax

from buda_runtime_sim import context
from buda_runtime_sim.config import CompilerConfig, _get_global_compiler_config
from buda_runtime_sim.framework_tensors import to_framework

from .build_state import BuildState
from .frontends.imported import ImportedModel


# What each frontend's users get back (ONNX, TFLite and plain Relax users get numpy).
OUTPUT_FRAMEWORK = {"pytorch": "pytorch", "tensorflow": "tensorflow", "jax": "jax"}


class CompiledModel:
    def __init__(self, imported: ImportedModel, executable, state: BuildState):
        self.name = imported.name
        self.framework = imported.framework
        self.imported = imported
        self.executable = executable
        self.state = state
        self.config = state.config
        self.vm = relax.VirtualMachine(executable, tvm.cpu())
        main = imported.mod["main"]
        weight_names = [v.name for v in main.params[len(imported.inputs):]]
        self._weights = [tvm.runtime.tensor(np.ascontiguousarray(imported.params[n])) for n in weight_names]
        self.exec_context = context.ExecutionContext(numerics=state.config.numerics())

    # ---- running ----------------------------------------------------------------------------
    def run(self, *inputs, **named_inputs):
        """Run on the simulator; inputs and outputs in the model's framework (torch for PyTorch).

        Keyword inputs are matched to the model's input names."""
        arrays = self.imported.bind_inputs(inputs, named_inputs)
        args = [tvm.runtime.tensor(np.ascontiguousarray(a)) for a in arrays]
        with context.use(self.exec_context):
            result = self.vm["main"](*args, *self._weights)
        converted = [self._to_framework(o) for o in _flatten(result)]
        return self.imported.pack_outputs(converted)

    __call__ = run

    def _to_framework(self, array: np.ndarray):
        return to_framework(array, OUTPUT_FRAMEWORK.get(self.framework, "numpy"))

    # ---- what went where --------------------------------------------------------------------
    def device_ops(self) -> list[str]:
        """Relax op names that run on the device, in generated-code order."""
        return [op for _, graph in self.state.subgraphs for op in graph.source_ops]

    def cpu_ops(self) -> list[str]:
        """Relax op names left on the host (compiled by TVM for LLVM)."""
        return host_ops(self.state.partitioned)

    @property
    def generated_files(self) -> list[Path]:
        return [path for subgraph, _ in self.state.subgraphs for path in subgraph.files.all()]

    @property
    def num_device_subgraphs(self) -> int:
        return len(self.state.subgraphs)

    def __repr__(self) -> str:
        return (f"CompiledModel({self.name!r}, framework={self.framework}, device_subgraphs={self.num_device_subgraphs}, "
                f"device_ops={len(self.device_ops())}, cpu_ops={len(self.cpu_ops())})")


def host_ops(mod: tvm.IRModule) -> list[str]:
    ops = []
    for _, func in mod.functions.items():
        if not isinstance(func, relax.Function) or (func.attrs is not None and "Codegen" in func.attrs):
            continue
        for block in func.body.blocks:
            for binding in block.bindings:
                value = binding.value
                if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op):
                    ops.append(value.op.name.removeprefix("relax."))
    return ops


def _flatten(result) -> list[np.ndarray]:
    if isinstance(result, tvm.runtime.Tensor):
        return [result.numpy()]
    return [a for item in result for a in _flatten(item)]


def resolve_config(config: CompilerConfig | None) -> CompilerConfig:
    return (config or _get_global_compiler_config()).copy()


def compile_model(model, sample_inputs, config: CompilerConfig | None = None, name: str | None = None) -> CompiledModel:
    """Compile a framework model for the buda backend, using `sample_inputs` for shapes and dtypes."""
    from .build import build_imported
    from .frontends.dispatch import import_model

    if not isinstance(sample_inputs, (tuple, list)):
        sample_inputs = (sample_inputs,)
    imported = import_model(model, tuple(sample_inputs), name)
    return build_imported(imported, resolve_config(config))
