"""Running a device subgraph when the Relax VM calls it.

`relax.ext.buda` registers one global packed function per subgraph symbol. The VM calls it in
destination-passing style (inputs..., outputs...); we run the generated PyBudaModule on the
simulator and copy its results into the VM's output tensors.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import tvm

from buda_runtime_sim import context
from buda_runtime_sim.tensor import Tensor
from codegen import GeneratedFiles, load_module

_REGISTRY: dict[str, "DeviceSubgraph"] = {}
_lock = threading.Lock()


@dataclass
class DeviceSubgraph:
    symbol: str
    files: GeneratedFiles
    arg_roles: list[tuple[str, str, str]]   # (kind, name in the module, name in the host graph)
    num_outputs: int
    preloaded: dict | None = field(default=None, repr=False)  # weights already in memory, by module name
    _module: object = field(default=None, repr=False)

    @property
    def module(self):
        """The generated PyBudaModule, imported on first use (or after `reload`)."""
        if self._module is None:
            self._module = load_module(self.files, self.preloaded)
        return self._module

    def reload(self) -> None:
        """Re-import the source and re-read the weights file on the next call (hand edits)."""
        self._module = None
        self.preloaded = None

    def __call__(self, *args) -> None:
        n_in = len(self.arg_roles)
        ins, outs = args[:n_in], args[n_in:]
        ctx = context.current()
        input_df = ctx.numerics.input_df
        acts = [
            Tensor.from_array(np.from_dlpack(arg), input_df)
            for arg, (kind, _, _) in zip(ins, self.arg_roles)
            if kind == "input"
        ]
        results = self.module(*acts)
        results = results if isinstance(results, (tuple, list)) else (results,)
        if len(results) != len(outs):
            raise RuntimeError(
                f"generated module {self.files.source.name} returned {len(results)} outputs, the graph expects {len(outs)}"
            )
        for out, result in zip(outs, results):
            dest = np.from_dlpack(out)
            value = result.numpy() if isinstance(result, Tensor) else np.asarray(result)
            if value.shape != dest.shape:
                raise RuntimeError(
                    f"generated module {self.files.source.name} produced shape {value.shape}, the graph expects {dest.shape}"
                )
            dest[...] = value


def register(subgraph: DeviceSubgraph) -> None:
    """Make the subgraph callable by the VM under its symbol (a global packed function)."""
    with _lock:
        _REGISTRY[subgraph.symbol] = subgraph
        tvm.register_global_func(subgraph.symbol, subgraph, override=True)


def lookup(symbol: str) -> DeviceSubgraph:
    try:
        return _REGISTRY[symbol]
    except KeyError:
        raise RuntimeError(f"no generated module is registered for device function {symbol}") from None


def _ext_buda(functions, options, constant_names):
    """RunCodegen's hook. BudaCodegen already registered every subgraph symbol as a global packed
    function, so there is no runtime module to return; this checks none was missed."""
    for func in functions:
        lookup(str(func.attrs["global_symbol"]))
    return []


tvm.register_global_func("relax.ext.buda", _ext_buda, override=True)
