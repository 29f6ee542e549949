"""Partitioning for the buda device: which Relax ops run on the device, grouped into subgraphs.

Shaped like TVM's backend modules: a check, patterns registered once at import (generated
from the op table), and one public `partition_for_buda`.
"""

from __future__ import annotations

import threading

import tvm
from tvm import relax
from tvm.relax.backend.pattern_registry import get_patterns_with_prefix, register_patterns
from tvm.relax.backend.utils import has_leaking_intermediate_variables
from tvm.relax.dpl import CallPattern, ExprPattern, ExternFuncPattern, TupleGetItemPattern, TuplePattern
from tvm.relax.transform import PatternCheckContext

from .fallback import DataflowGraph, forced_host_ops, where
from .merge_programs import merge_adjacent_programs
from .op_composites import composite_patterns
from .op_table import OP_TABLE, call_op_name, supported_on_device
from .packed_calls import HidePackedFunctions, RestorePackedCalls

PATTERN_PREFIX = "buda."

# Host-only ops users know by PyBuda/Relay names (beyond the aliases in the op table).
_FALLBACK_ALIASES = {"embedding": "relax.take", "cumsum": "relax.cumsum", "take": "relax.take"}


class _Policy:
    """Bindings of `main` the fallback policy keeps on the host, during one partition.

    Named by their bound variable, not by the call: FuseOpsByPattern rebuilds calls whose inputs
    an earlier pattern fused, but keeps the variables they bind to."""

    lock = threading.Lock()
    host_vars: set | tuple = ()

    def on_host(self, context: PatternCheckContext, exprs) -> bool:
        bound = context.value_to_bound_var
        return any(e in bound and bound[e] in self.host_vars for e in exprs)


_policy = _Policy()


def _check(context: PatternCheckContext) -> bool:
    root = context.annotated_expr["root"]
    return not _policy.on_host(context, [root]) and supported_on_device(root)


def _patterns():
    for entry in OP_TABLE:
        root = entry.pattern()
        yield (PATTERN_PREFIX + entry.name, root, {"root": root}, _check)


def _composite_patterns():
    """Fused patterns (matmul + bias, ...) from the op table; never across an op kept on the host,
    and never when an inner result is also read outside the match (`addmm`'s x@W + (x@W + b)):
    fusing then would duplicate the product or make two groups depend on each other (a cycle)."""
    for name, root, annotated, check in composite_patterns(PATTERN_PREFIX):
        def guarded(context: PatternCheckContext, check=check) -> bool:
            exprs = [context.matched_expr, *context.annotated_expr.values()]
            return (not _policy.on_host(context, exprs) and not has_leaking_intermediate_variables(context)
                    and check(context))

        yield (name, root, annotated, guarded)


# Composites last: later entries win.
register_patterns(list(_patterns()) + list(_composite_patterns()))


def relax_op_name(name: str) -> str:
    """Normalise a user's op name ("embedding", "take", "relax.take", "gelu", "nn.gelu") to a Relax op name."""
    key = name.strip().lower()
    if key.startswith("relax."):
        return key
    if key in _FALLBACK_ALIASES:
        return _FALLBACK_ALIASES[key]
    for entry in OP_TABLE:
        if key in (entry.name, entry.name.removeprefix("nn.")) or key in entry.fallback_aliases:
            return entry.relax_op
    return "relax." + key


def device_patterns():
    """Registered buda patterns, highest priority first."""
    return get_patterns_with_prefix(PATTERN_PREFIX)


def _required_ops(pattern) -> set[str]:
    """Ops every match of `pattern` calls (a subset when the pattern has alternatives: those add none)."""
    if isinstance(pattern, CallPattern):
        op = pattern.op
        own = {op.expr.name} if isinstance(op, ExprPattern) and isinstance(op.expr, tvm.ir.Op) else set()
        return own.union(*(_required_ops(a) for a in pattern.args))
    if isinstance(pattern, ExternFuncPattern):   # call_pure_packed of one of our functions
        return {str(pattern.global_symbol)}
    if isinstance(pattern, TuplePattern):
        return set().union(*(_required_ops(f) for f in pattern.fields))
    if isinstance(pattern, TupleGetItemPattern):
        return _required_ops(pattern.tuple)
    return set()


def _called_ops(mod: tvm.IRModule) -> set[str]:
    names = set()
    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, lambda e: isinstance(e, relax.Call) and _add_called(names, e))
    return names


def _add_called(names: set, call: relax.Call) -> None:
    """The call's op, and for a call_pure_packed also the function it calls."""
    if isinstance(call.op, tvm.ir.Op):
        names.add(call.op.name)
        names.add(call_op_name(call))


def patterns_for(mod: tvm.IRModule) -> list:
    """The device patterns that can match in `mod`, in priority order: those calling an op `mod`
    never calls are left out (FuseOpsByPattern scans the whole module once per pattern)."""
    called = _called_ops(mod)
    return [p for p in device_patterns() if _required_ops(p.pattern) <= called]


class UnsupportedOpError(RuntimeError):
    """An op the device cannot run, with CPU fallback disabled."""


def partition_for_buda(mod: tvm.IRModule, config=None) -> tvm.IRModule:
    """Group device-supported ops into functions marked Codegen="buda"; the rest stays on the host.

    config: a CompilerConfig (fallback policy); None means PyBuda's defaults.
    """
    if config is None:
        from buda_runtime_sim.config import CompilerConfig

        config = CompilerConfig()
    main = mod["main"]
    graph = DataflowGraph.of(main)
    host = set()
    if config.enable_tvm_cpu_fallback:
        fallback = {relax_op_name(n) for n in config.cpu_fallback_ops}
        host = forced_host_ops(graph, fallback, config.enable_tm_cpu_fallback, config.tm_cpu_fallback_max_depth)
    seq = tvm.transform.Sequential(
        [
            relax.transform.FuseOpsByPattern(patterns_for(mod), bind_constants=False, annotate_codegen=False),
            HidePackedFunctions(),
            relax.transform.MergeCompositeFunctions(),
            RestorePackedCalls(),
            merge_adjacent_programs,
        ],
        name="partition_for_buda",
    )
    with _policy.lock:
        _policy.host_vars = host
        try:
            partitioned = seq(mod)
        finally:
            _policy.host_vars = ()
    if not config.enable_tvm_cpu_fallback:
        _require_all_on_device(partitioned)
    return partitioned


def _require_all_on_device(mod: tvm.IRModule) -> None:
    graph = DataflowGraph.of(mod["main"])
    left = [v for v in graph.order if v in graph.ops]
    if left:
        listed = "; ".join(where(graph, v) for v in left[:5]) + (f"; and {len(left) - 5} more" if len(left) > 5 else "")
        raise UnsupportedOpError(
            f"CPU fallback is disabled (enable_tvm_cpu_fallback=False) but {len(left)} op(s) cannot run on the "
            f"device: {listed}. Enable CPU fallback, or change the model to avoid these ops."
        )
