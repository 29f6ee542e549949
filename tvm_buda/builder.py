"""`tvm_buda.build`: a Relax module (or an imported framework model) -> CompiledModel."""

from __future__ import annotations

import tvm

from buda_runtime_sim.config import CompilerConfig

from .build_state import BuildState, active_build
from .compiled_model import CompiledModel, resolve_config
from .frontends.imported import ImportedModel, TensorSpec, to_numpy
from .registration import PIPELINE_NAME, TARGET_TAG


def build_imported(imported: ImportedModel, config: CompilerConfig, fold_weights: bool = True) -> CompiledModel:
    """fold_weights=False: no graph pass may bake a weight's value into a constant (training builds,
    whose weights change every step)."""
    from .reports import writer

    recorder = writer.new_recorder() if writer.enabled(config) else None
    state = BuildState(config, imported.name, imported.params, imported.framework, links_vm=True, recorder=recorder,
                       fold_weights=fold_weights)
    with active_build(state):
        try:
            executable = tvm.compile(imported.mod, target=TARGET_TAG, relax_pipeline=PIPELINE_NAME)
        except Exception:
            if state.error is not None:
                raise state.error from None
            raise
    main = imported.mod["main"]
    weight_names = [v.name for v in main.params[len(imported.inputs):]]
    compiled = CompiledModel(imported, executable, weight_names, state.subgraphs, state.summary, config,
                             index_limits=state.index_limits)
    if recorder is not None:
        writer.write_report(compiled, recorder)
    return compiled


def build(mod: tvm.IRModule, params=None, config: CompilerConfig | None = None, name: str = "module") -> CompiledModel:
    """Compile a Relax module for buda in one call (today's `relay.build(mod, target="buda", params=...)`).

    params: weights by parameter name of `main` (numpy, torch or TVM tensors); parameters not
    named here are the runtime inputs, in order.
    """
    params = {k: to_numpy(v) for k, v in (params or {}).items()}
    main = mod["main"]
    inputs = [
        TensorSpec(v.name, tuple(int(d) for d in v.ty.shape), str(v.ty.dtype))
        for v in main.params if v.name not in params
    ]
    weight_positions = [i for i, v in enumerate(main.params) if v.name in params]
    if weight_positions and weight_positions != list(range(len(inputs), len(main.params))):
        raise ValueError("build: weight parameters of 'main' must come after all runtime inputs")
    if params and (main.attrs is None or "num_input" not in main.attrs):
        mod = tvm.IRModule({**{gv: f for gv, f in mod.functions.items()},
                            mod.get_global_var("main"): main.with_attr("num_input", len(inputs))}, attrs=mod.attrs)
    imported = ImportedModel(name, "relax", mod, params, inputs,
                             "tuple" if isinstance(main.ret_ty, tvm.relax.TupleType) else "single")
    return build_imported(imported, resolve_config(config))

