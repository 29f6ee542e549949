"""Running a device subgraph when the Relax VM calls it.

The VM calls each subgraph in destination-passing style (inputs..., outputs...) through a global
packed function of the subgraph's symbol; we run the generated PyBudaModule on the simulator and
copy its results into the VM's output tensors. The VM resolves those functions when it is
created, so `linked()` registers them only for that moment: afterwards the VM alone holds them and
dropping the compiled model releases them.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

import numpy as np
import tvm_ffi

from buda_runtime_sim import bf16_gemm, context, env, finite_check, float_errors
from buda_runtime_sim.tensor import Tensor
from codegen import GeneratedFiles, LoadedModule

from . import host_vm
from .build_state import current_build
from .program_inputs import device_input

_link_lock = threading.RLock()
_FLOAT32 = np.dtype(np.float32)


@dataclass(eq=False)
class DeviceSubgraph:
    symbol: str
    files: GeneratedFiles
    arg_roles: list[tuple[str, str, str]]   # (kind, name in the module, name in the host graph)
    num_outputs: int
    preloaded: dict | None = field(default=None, repr=False)  # weights already in memory, by module name
    _loaded: LoadedModule | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self):
        self._loaded = LoadedModule(self.files, self.preloaded)  # the code this model was compiled with

    @property
    def module(self):
        """The generated PyBudaModule this subgraph runs (imported when the model was compiled).

        If its file changed on disk since, PYBUDA_RELOAD_GENERATED_MODULES=1 re-imports it; without
        the flag that is an error rather than a silent change of function."""
        with self._lock:
            changed = self._loaded.changed_files()
            if changed:
                if env.RELOAD_GENERATED_MODULES.get_int() != 1:
                    raise RuntimeError(
                        f"{', '.join(map(str, changed))} changed on disk since this model was compiled; set "
                        f"PYBUDA_RELOAD_GENERATED_MODULES=1 to run the edited file, or compile the model again")
                self._loaded = LoadedModule(self.files, self.preloaded if self.files.params not in changed else None)
            return self._loaded.instance

    def reload(self) -> None:
        """Re-import the source and re-read the weights file now (hand edits). A model loaded from
        an image has no weights file (its weights came from the archive into memory): it keeps those."""
        with self._lock:
            if self.files.params.exists():
                self.preloaded = None
            elif self.preloaded is None:
                raise RuntimeError(f"cannot reload {self.files.source.name}: its weights file {self.files.params} "
                                   "is gone; compile the model again")
            self._loaded = LoadedModule(self.files, self.preloaded)

    def __call__(self, *args) -> None:
        # once for the whole program: the kernels' own error-state blocks are then free, and the
        # bfloat16 GEMM setting is read from the environment once, not per matmul
        with float_errors.ignored(), bf16_gemm.setting_fixed():
            self._run(*args)

    def _run(self, *args) -> None:
        n_in = len(self.arg_roles)
        ins, outs = args[:n_in], args[n_in:]
        ctx = context.current()
        input_df = ctx.numerics.input_df
        hosts = [host_vm.to_numpy(arg) for arg, (kind, _, _) in zip(ins, self.arg_roles) if kind == "input"]
        acts = [device_input(host, input_df) for host in hosts]
        module = self.module
        if ctx.observer is not None:     # a watched run (explain): ops are told apart by program
            ctx.program = module.name
        chips = context.chip_ledger()   # a multi-chip device: the ops that follow belong to this program
        if chips is not None:
            chips.enter_module(module.name)
        results = module(*acts)
        results = results if isinstance(results, (tuple, list)) else (results,)
        if len(results) != len(outs):
            raise RuntimeError(
                f"generated module {self.files.source.name} returned {len(results)} outputs, the graph expects {len(outs)}"
            )
        for out, result in zip(outs, results):
            dest = host_vm.to_numpy(out)
            if type(result) is Tensor and result.dtype is _FLOAT32 and result.shape == dest.shape \
                    and result.padded.shape == dest.shape:
                value = result.padded    # storage without padding (tile-multiple shape): the logical values
            elif isinstance(result, Tensor):   # a float result is copied once: device storage -> VM output
                value = result.logical() if result.dtype == np.float32 else result.numpy()
            else:
                value = np.asarray(result)
            if value.shape != dest.shape:
                raise RuntimeError(
                    f"generated module {self.files.source.name} produced shape {value.shape}, the graph expects {dest.shape}"
                )
            dest[...] = value
        if ctx.check_finite != "off" or env.CHECK_FINITE.get():   # inf/NaN the device made: named (finite_check.py)
            finite_check.check_program(
                module.name, module, hosts, [host_vm.to_numpy(out) for out in outs],
                lambda df: module(*(acts if df is None else [device_input(h, df) for h in hosts])), ctx.check_finite)


def module_weight_sources(subgraphs) -> dict[str, tuple[int, str]]:
    """Host weight name -> (subgraph index, name in that module), for weights a generated module holds.

    Those are stored once (in the module's weights) and shared with the VM on load."""
    out = {}
    for index, (subgraph, _) in enumerate(subgraphs):
        for kind, local, source in subgraph.arg_roles:
            if kind == "parameter" and source:
                out.setdefault(source, (index, local))
    return out


def register(subgraph: DeviceSubgraph) -> None:
    """Make the subgraph callable under its symbol for the rest of the process (plain `tvm.compile`,
    whose caller creates the VM later; tvm_buda's own builds use `linked`)."""
    with _link_lock:
        tvm_ffi.register_global_func(subgraph.symbol, subgraph, override=True)


@contextlib.contextmanager
def linked(subgraphs):
    """Register the subgraphs' symbols while the block creates a Relax VM (which resolves and keeps
    them), then remove them, so no global registry keeps a dropped model alive."""
    with _link_lock:
        for subgraph in subgraphs:
            tvm_ffi.register_global_func(subgraph.symbol, subgraph, override=True)
        try:
            yield
        finally:
            for subgraph in subgraphs:
                tvm_ffi.remove_global_func(subgraph.symbol)


def _ext_buda(functions, options, constant_names):
    """RunCodegen's hook. BudaCodegen already generated every subgraph (and, for a plain
    `tvm.compile`, registered its symbol), so there is no runtime module to return; this checks
    none was missed."""
    built = {sub.symbol for sub, _ in current_build().subgraphs}
    for func in functions:
        symbol = str(func.attrs["global_symbol"])
        if symbol not in built and tvm_ffi.get_global_func(symbol, allow_missing=True) is None:
            raise RuntimeError(f"no generated module is registered for device function {symbol}")
    return []


tvm_ffi.register_global_func("relax.ext.buda", _ext_buda, override=True)
# the error keeps its type through the Relax VM, which calls device programs over the FFI (and
# rebuilds the error from its message)
tvm_ffi.register_error("NonFiniteResultError", finite_check.NonFiniteResultError)
