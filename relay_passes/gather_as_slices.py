"""GatherAsSlices: `take` with constant indices along an axis is a concatenation of slices.

PyTorch exports reflection and replication padding as take(x, index computed from arange): once
the index folds to a constant (FillConstants fills the arange), the gather is static. Each run of
consecutive indices becomes one strided slice and the runs are concatenated along the axis, all
device ops. Gathers from weights (embedding tables) stay as they are: the host does embeddings by
policy. Only 0-d or 1-d indices with at most MAX_RUNS runs are rewritten.
"""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator

from .scalars import constant_array, static_shape

MAX_RUNS = 64  # beyond this a gather is a real gather (a lookup table), not a pad


def _runs(index: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) runs of consecutive values, in order."""
    breaks = np.flatnonzero(np.diff(index) != 1) + 1
    return [(int(part[0]), int(part[-1]) + 1) for part in np.split(index, breaks)]


def _is_weight(expr, weights: list) -> bool:
    return any(expr.same_as(w) for w in weights)


def _as_slices(call: relax.Call, weights: list) -> relax.Expr | None:
    data, indices = call.args
    index, shape = constant_array(indices), static_shape(data)
    if index is None or shape is None or index.ndim > 1 or index.dtype.kind not in "iu" or _is_weight(data, weights):
        return None
    if isinstance(data, tvm.ir.Constant) or not isinstance(data.ty, relax.TensorType):
        return None
    axis = int(call.attrs.axis) % len(shape) if call.attrs.axis is not None else None
    if axis is None:
        return None
    size = shape[axis]
    flat = np.mod(index, size) if str(call.attrs.mode) == "wrap" else np.clip(index, 0, size - 1)
    runs = _runs(flat.reshape(-1).astype(np.int64))
    if len(runs) > MAX_RUNS:
        return None
    parts = [relax.op.strided_slice(data, [axis], [start], [stop]) for start, stop in runs]
    if index.ndim == 0:
        return relax.op.squeeze(parts[0], [axis])
    return parts[0] if len(parts) == 1 else relax.op.concat(parts, axis=axis)


@mutator
class _GatherMutator(PyExprMutator):
    def __init__(self, mod, weights: list):
        super().__init__(mod)
        self.weights = weights

    def visit_call_(self, call: relax.Call) -> relax.Expr:
        call = super().visit_call_(call)
        if isinstance(call.op, tvm.ir.Op) and call.op.name == "relax.take":
            new = _as_slices(call, self.weights)
            return call if new is None else new
        return call


def _weight_params(func: relax.Function) -> list:
    """main's parameters after its `num_input` runtime inputs (none known: no weights)."""
    attrs = func.attrs
    if attrs is None or "num_input" not in attrs:
        return []
    return list(func.params[int(attrs["num_input"]):])


@tvm.transform.module_pass(opt_level=0, name="GatherAsSlices")
class GatherAsSlices:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                rewriter = _GatherMutator(mod, _weight_params(func))
                rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
                mod = rewriter.builder_.get()
        return relax.transform.Normalize()(mod)
