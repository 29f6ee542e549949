"""`tvm_buda.explain(model, inputs)`: compile a model noting the stage it reaches, then explain its run.

A failure names the stage (import, graph passes, partition, codegen, build), its error and the ops
the error names; a model that compiles is run and compared op by op (explain.explain_compiled).
"""

from __future__ import annotations

from pathlib import Path

from buda_runtime_sim.runtime.verification import flat_outputs

from .build_state import progress_reporter
from .model_compiler import compile_model, default_model_name
from .explain import explain_compiled, message_of, named_ops
from .explain_report import Explanation

# the compile stages build_state.stage announces -> the names explain reports
STAGE_OF = {"import model": "import", "graph passes": "graph passes", "partition": "partition",
            "generate PyBuda modules": "codegen", "build host code (LLVM)": "build"}


def explain(model, sample_inputs=(), config=None, name: str | None = None, golden=None,
            run: bool = True) -> Explanation:
    """Compile `model` (and, with `run`, run it on `sample_inputs` and compare per op); never raises
    for a model that fails: the Explanation says where and why. golden: the framework's outputs
    (default: the framework model run on the inputs, where tvm-buda knows how)."""
    inputs = tuple(sample_inputs) if isinstance(sample_inputs, (tuple, list)) else (sample_inputs,)
    reached = ["import model"]
    with progress_reporter(reached.append):
        try:
            compiled = compile_model(model, inputs, config=config, name=name)
        except Exception as exc:  # noqa: BLE001 - the report is the answer
            return Explanation(name or default_model_name(model), stage=STAGE_OF.get(reached[-1], reached[-1]),
                               error=message_of(exc), error_type=type(exc).__name__, failing_ops=named_ops(exc))
    if not run:
        return explain_compiled(compiled, None, None)
    if golden is None:
        golden = framework_outputs(model, inputs)
    return explain_compiled(compiled, inputs, golden)


def framework_outputs(model, inputs: tuple):
    """The framework's own outputs for `inputs` as a flat list of arrays, or None if unknown."""
    from .frontends.imported import split_samples, to_numpy

    if isinstance(model, (str, Path)):
        from .model_files import reference_outputs

        return reference_outputs(Path(model), [to_numpy(x) for x in inputs])
    args, kwargs = split_samples(inputs)
    if hasattr(model, "cpu_eval"):
        return flat_outputs(model.cpu_eval(*args, **kwargs))
    if type(model).__module__.startswith("torch") or hasattr(model, "parameters") and hasattr(model, "forward"):
        import torch

        with torch.no_grad():
            return flat_outputs(model(*args, **kwargs))
    return flat_outputs(model(*args, **kwargs)) if callable(model) else None
