"""Partitioning for the buda device: which Relax ops run on the device, grouped into subgraphs.

Shaped like TVM's backend modules: a check, patterns registered once at import (generated
from the op table), and one public `partition_for_buda`.
"""

from __future__ import annotations

import tvm
from tvm import relax
from tvm.relax.backend.pattern_registry import get_patterns_with_prefix, register_patterns
from tvm.relax.dpl import is_op, wildcard
from tvm.relax.transform import PatternCheckContext

from .op_table import OP_TABLE, OPS_BY_RELAX_NAME, supported_on_device

PATTERN_PREFIX = "buda."

# Host-only ops users know by PyBuda/Relay names (beyond the aliases in the op table).
_FALLBACK_ALIASES = {"embedding": "relax.take", "cumsum": "relax.cumsum", "take": "relax.take"}


def _check(context: PatternCheckContext) -> bool:
    return supported_on_device(context.annotated_expr["root"])


def _patterns():
    for entry in OP_TABLE:
        root = is_op(entry.relax_op)(*[wildcard() for _ in range(entry.num_args)])
        yield (PATTERN_PREFIX + entry.name, root, {"root": root}, _check)


register_patterns(list(_patterns()))


def relax_op_name(name: str) -> str:
    """Normalise a user's op name ("embedding", "take", "relax.take", "layernorm") to a Relax op name."""
    key = name.strip().lower()
    if key.startswith("relax."):
        return key
    if key in _FALLBACK_ALIASES:
        return _FALLBACK_ALIASES[key]
    for entry in OP_TABLE:
        if key == entry.name or key in entry.fallback_aliases:
            return entry.relax_op
    return "relax." + key


def device_patterns(cpu_fallback_ops=()):
    """Registered buda patterns, highest priority first, minus ops forced onto the host."""
    host_only = {relax_op_name(n) for n in cpu_fallback_ops}
    excluded = {PATTERN_PREFIX + OPS_BY_RELAX_NAME[op].name for op in host_only if op in OPS_BY_RELAX_NAME}
    return [p for p in get_patterns_with_prefix(PATTERN_PREFIX) if p.name not in excluded]


def partition_for_buda(mod: tvm.IRModule, cpu_fallback_ops=()) -> tvm.IRModule:
    """Group device-supported ops into functions marked Codegen="buda"; the rest stays on the host."""
    seq = tvm.transform.Sequential(
        [
            relax.transform.FuseOpsByPattern(
                device_patterns(cpu_fallback_ops), bind_constants=False, annotate_codegen=False
            ),
            relax.transform.MergeCompositeFunctions(),
        ],
        name="partition_for_buda",
    )
    return seq(mod)
