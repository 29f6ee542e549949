"""CPU fallback policy: which ops must stay on the host, decided on the Relax graph of `main`.

PyBuda's rules, as its advanced guide states them:
- ops named in `cpu_fallback_ops` run on the host, and so do all their predecessors or all their
  descendants, whichever set is smaller (fewer graph breaks);
- ops that share a parameter with a fallback op follow it to the host;
- with `enable_tm_cpu_fallback`, pure tensor manipulations within `tm_cpu_fallback_max_depth` of
  the graph's inputs or outputs move to the host (never matmul or conv).
Ops the device cannot run at all stay on the host regardless (the partitioner leaves them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tvm
from tvm import relax

from .op_table import call_op_name

# Pure data movement: cheap on the host, worth moving to avoid a device round trip.
TM_OPS = frozenset({
    "relax.reshape", "relax.permute_dims", "relax.squeeze", "relax.expand_dims", "relax.flatten",
    "relax.strided_slice", "relax.concat", "relax.split", "relax.broadcast_to", "relax.layout_transform",
})


@dataclass
class DataflowGraph:
    """Bindings of `main` as a graph: op bindings, who produces and who consumes each Var."""

    ops: dict = field(default_factory=dict)         # Var -> op name (Call to an Op)
    args: dict = field(default_factory=dict)        # Var -> list of Vars it reads (bindings or params)
    consumers: dict = field(default_factory=dict)   # Var -> list of binding Vars reading it
    order: list = field(default_factory=list)       # binding Vars in program order
    inputs: list = field(default_factory=list)      # runtime inputs of main
    params: list = field(default_factory=list)      # weight parameters of main
    outputs: list = field(default_factory=list)     # Vars returned by main

    @classmethod
    def of(cls, func: relax.Function) -> "DataflowGraph":
        """Runtime inputs are the first `num_input` parameters (all of them without that attribute)."""
        g = cls()
        attrs = func.attrs
        n = int(attrs["num_input"]) if attrs is not None and "num_input" in attrs else len(func.params)
        g.inputs, g.params = list(func.params[:n]), list(func.params[n:])
        for block in func.body.blocks:
            for binding in block.bindings:
                var, value = binding.var, binding.value
                g.order.append(var)
                g.args[var] = vars_in(value)
                for a in g.args[var]:
                    g.consumers.setdefault(a, []).append(var)
                if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op):
                    g.ops[var] = call_op_name(value)
        g.outputs = vars_in(func.body.body)
        return g

    def _reach(self, start, step) -> set:
        seen, stack = set(), list(step(start))
        while stack:
            v = stack.pop()
            if v in seen or v not in self.args:  # params and inputs are not bindings
                continue
            seen.add(v)
            stack.extend(step(v))
        return seen

    def ancestors(self, var) -> set:
        return {v for v in self._reach(var, lambda x: self.args.get(x, [])) if v in self.ops}

    def descendants(self, var) -> set:
        return {v for v in self._reach(var, lambda x: self.consumers.get(x, [])) if v in self.ops}


def vars_in(expr) -> list:
    if isinstance(expr, relax.Var):
        return [expr]
    if isinstance(expr, relax.Call):
        return [v for a in expr.args for v in vars_in(a)]
    if isinstance(expr, relax.Tuple):
        return [v for f in expr.fields for v in vars_in(f)]
    if isinstance(expr, relax.TupleGetItem):
        return vars_in(expr.tuple_value)
    return []


def forced_host_ops(graph: DataflowGraph, fallback_ops: set[str], tm_fallback: bool, tm_max_depth: int) -> set:
    """Bindings of `main` that must run on the host under the fallback policy."""
    host = set()
    params = set(graph.params)
    for var in graph.order:
        if graph.ops.get(var) not in fallback_ops:
            continue
        before, after = graph.ancestors(var), graph.descendants(var)
        host |= {var} | (before if len(before) <= len(after) else after)
        for p in (a for a in graph.args[var] if a in params):  # shared weights follow the fallback op
            host |= {c for c in graph.consumers.get(p, []) if c in graph.ops}
    if tm_fallback:
        host |= tm_fallback_ops(graph, tm_max_depth)
    return host


def tm_fallback_ops(graph: DataflowGraph, max_depth: int) -> set:
    """TM ops fed only by inputs through TM ops (or feeding only outputs through TM ops),
    at most `max_depth` ops away from the graph's inputs or outputs."""
    chosen: set = set()   # TM ops moved to the host
    passed: set = set()   # non-op bindings (aliases, tuples) on the host side of the boundary

    def walk(candidates, step, only_from):
        # step: neighbours in the walk's direction; only_from: the other direction, every one
        # of which must already be on the host side for a candidate to join it.
        for _ in range(max_depth):
            nxt = set()
            for n in candidates:
                if n in chosen or n in passed or n not in graph.args:
                    continue
                is_tm = graph.ops.get(n) in TM_OPS
                if not is_tm and n in graph.ops:
                    continue
                if all(m in chosen or m in passed or m not in graph.args for m in only_from(n)):
                    (chosen if is_tm else passed).add(n)
                    nxt |= set(step(n))
            candidates = nxt

    walk({c for v in graph.inputs for c in graph.consumers.get(v, [])},
         lambda v: graph.consumers.get(v, []), lambda n: graph.args[n])
    walk(set(graph.outputs), lambda v: graph.args.get(v, []), lambda n: graph.consumers.get(n, []))
    return chosen


def where(graph: DataflowGraph, var) -> str:
    """Where a binding sits, for error messages: its op, position, inputs and shape."""
    position = graph.order.index(var) + 1
    ins = ", ".join(a.name for a in graph.args.get(var, [])) or "constants"
    shape = getattr(var.ty, "shape", None)
    return (f"'{graph.ops.get(var, '?').removeprefix('relax.')}' (binding {var.name}, op {position} of "
            f"{len(graph.order)} in main, reading {ins}, output shape {_dims(shape)})")


def _dims(shape) -> str:
    if shape is None:
        return "?"
    return "(" + ", ".join(str(int(d)) if hasattr(d, "value") else str(d) for d in shape) + ")"
