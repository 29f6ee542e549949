"""The "buda" Relax pipeline (registration.py registers it, and the target tag, with TVM; importing
this module registers `relax.ext.buda` through device_runtime).

After `import tvm_buda`, `tvm.compile(mod, target="buda", relax_pipeline="buda")` partitions the
module, generates PyBuda modules for the device parts and builds the rest for LLVM.
"""

from __future__ import annotations

import tvm
from tvm import relax

from relay_passes import buda_pass_pipeline

from . import device_runtime  # noqa: F401  (registers relax.ext.buda)
from .build_state import current_build, stage
from .codegen_pass import BudaCodegen
from .host_lowering import lower_host_ops
from .partition import partition_for_buda

def buda_pipeline():
    """The Relax pipeline: graph passes -> partition -> codegen -> RunCodegen -> TVM's default build."""

    @tvm.transform.module_pass(opt_level=0, name="buda_pipeline")
    def _pipeline(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        state = current_build()
        stage("graph passes")
        passes = buda_pass_pipeline(state.params if state.fold_weights else None, state.baked_weights)
        recorder = state.recorder
        try:   # (TVM's FFI turns exceptions into RuntimeError: keep the original, with its note naming the pass)
            if recorder is not None:
                recorder.initial(mod)
                why = {p.name: p.why for p in passes.passes}
                mod = passes(mod, verify=lambda name, m: recorder.after_pass(name, m, why[name]))
            else:
                mod = passes(mod)
        except Exception as exc:
            state.error = exc
            raise
        stage("partition")
        try:
            mod = partition_for_buda(mod, state.config)
        except Exception as exc:  # TVM's FFI turns exceptions into RuntimeError: keep the original
            state.error = exc
            raise
        stage("generate PyBuda modules")
        mod = BudaCodegen(state)(mod)
        if state.recorder is not None:
            state.recorder.partitioned(mod)
        stage("build host code (LLVM)")
        mod = relax.transform.RunCodegen()(mod)
        return relax.get_pipeline("default")(lower_host_ops(mod))

    return _pipeline
