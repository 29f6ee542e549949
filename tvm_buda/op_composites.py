"""Composite entries of the op table: several Relax ops that become one PyBuda op
(matmul + bias, conv + bias). Partition registers their patterns after the single-op ones
(later entries win); codegen lowers each matched function with `lower_composite`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tvm import relax
from tvm.relax.analysis import get_var2val
from tvm.relax.dpl import is_op, wildcard

from .op_table import Lowered, _shape, lower_call, supported_on_device


@dataclass(frozen=True)
class CompositeEntry:
    name: str                                 # pattern name "buda.<name>"
    relax_ops: tuple[str, ...]                # ops inside: a host fallback on any of them disables it
    pattern: Callable[[], tuple]              # () -> (root pattern, {annotation name: pattern})
    check: Callable[[dict], bool]             # {annotation name: matched expr} -> device can take it
    convert: Callable[[dict], Lowered]        # {annotation name: matched expr} -> PyBuda op call


def _core_plus_bias(core_op: str):
    def pattern():
        lhs, rhs, bias = wildcard(), wildcard(), wildcard()
        core = is_op(core_op)(lhs, rhs)
        root = is_op("relax.add")(core, bias)
        return root, {"lhs": lhs, "rhs": rhs, "bias": bias, "core": core, "root": root}

    return pattern


def _bias_keeps_product_shape(m: dict) -> bool:
    return all(supported_on_device(m[k]) for k in ("core", "root")) and _shape(m["root"]) == _shape(m["core"])


def _per_output_channel(m: dict) -> bool:
    """The bias varies along the output channel axis only (any shape that broadcasts so)."""
    out, bias = _shape(m["core"]), _shape(m["bias"])
    if not _bias_keeps_product_shape(m) or out is None or bias is None or len(bias) > len(out):
        return False
    channel = len(out) - (1 if m["core"].attrs.out_layout == "NHWC" else 3)
    aligned = [1] * (len(out) - len(bias)) + bias
    return all(d == 1 or (i == channel and d == out[channel]) for i, d in enumerate(aligned))


def _fused_bias(m: dict) -> Lowered:
    core = lower_call(m["core"])
    return Lowered(core.op, list(core.inputs) + [m["bias"]], dict(core.attrs))


COMPOSITES: tuple[CompositeEntry, ...] = (
    CompositeEntry("matmul_bias", ("relax.matmul", "relax.add"), _core_plus_bias("relax.matmul"),
                   _bias_keeps_product_shape, _fused_bias),
    CompositeEntry("conv2d_bias", ("relax.nn.conv2d", "relax.add"), _core_plus_bias("relax.nn.conv2d"),
                   _per_output_channel, _fused_bias),
    CompositeEntry("conv2d_transpose_bias", ("relax.nn.conv2d_transpose", "relax.add"),
                   _core_plus_bias("relax.nn.conv2d_transpose"), _per_output_channel, _fused_bias),
)

COMPOSITES_BY_NAME: dict[str, CompositeEntry] = {entry.name: entry for entry in COMPOSITES}


def composite_patterns(prefix: str) -> list[tuple]:
    """(name, pattern, annotations, check) for `register_patterns`, after the single-op patterns."""
    out = []
    for entry in COMPOSITES:
        root, annotations = entry.pattern()
        out.append((prefix + entry.name, root, annotations,
                    lambda context, entry=entry: entry.check(dict(context.annotated_expr))))
    return out


def lower_composite(func: relax.Function) -> Lowered | None:
    """Codegen hook: one PyBuda op for a local function marked Composite="<prefix>.<name>", with
    the function's parameters as inputs; None when the composite is not in the table."""
    composite = func.attrs.get("Composite") if func.attrs is not None else None
    entry = COMPOSITES_BY_NAME.get(str(composite).split(".", 1)[-1]) if composite is not None else None
    if entry is None:
        return None
    root, annotations = entry.pattern()
    var2val = get_var2val(func)
    output = func.body.body
    matched = root.extract_matched_expr(var2val.get(output, output), var2val)
    if matched is None:
        return None
    return entry.convert({name: matched[p] for name, p in annotations.items()})
