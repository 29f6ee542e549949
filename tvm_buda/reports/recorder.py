"""PassRecorder: the graph after import, after each relay pass that changed it, and after
partitioning, kept as report-ready graphs (not IRModules, so nothing large stays alive)."""

from __future__ import annotations

import time

import tvm
import tvm_ffi
from tvm import relax

from .graphs import relax_graph


class PassRecorder:
    def __init__(self):
        self.snapshots: list[dict] = []   # {"name", "kind", "graph", "why"}
        self._last = None
        self.started = time.time()

    def _num_inputs(self, func: relax.Function) -> int | None:
        attrs = func.attrs
        return int(attrs["num_input"]) if attrs is not None and "num_input" in attrs else None

    def initial(self, mod: tvm.IRModule) -> None:
        self._record("initial_graph", "import", mod, "the model as imported into Relax")

    def after_pass(self, name: str, mod: tvm.IRModule, why: str = "") -> None:
        """Record `mod` if the pass changed main (the PassPipeline verify hook)."""
        if self._last is not None and tvm_ffi.structural_equal(self._last, mod["main"]):
            return
        self._record(name, "pass", mod, why)

    def partitioned(self, mod: tvm.IRModule) -> None:
        device = {gv.name_hint for gv, f in mod.functions.items()
                  if isinstance(f, relax.Function) and f.attrs is not None and f.attrs.get("Codegen") == "buda"}
        main = mod["main"]
        graph = relax_graph(main, self._num_inputs(main), {name: name for name in device})
        self.snapshots.append({"name": "post_partition", "kind": "partition", "graph": graph,
                               "why": "device subgraphs (green) and what stays on the host"})

    def _record(self, name: str, kind: str, mod: tvm.IRModule, why: str) -> None:
        main = mod["main"]
        self._last = main
        self.snapshots.append({"name": name, "kind": kind, "graph": relax_graph(main, self._num_inputs(main)),
                               "why": why})
