"""PositiveAxes: expand_dims / squeeze with negative axes spelled with positive ones.

Relax's ConvertLayout (run by ConvsChannelsLast) dies with std::bad_alloc on an expand_dims or
squeeze whose axis is negative (PyTorch's importer writes -1 for unsqueeze(-1), pool1d...): it
indexes the layout string with the raw axis. The same axes counted from the front mean the same op.
"""

import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator


def _positive(make, rank_of):
    def rewrite(call: relax.Call) -> relax.Expr | None:
        if call.attrs.axis is None or all(int(a) >= 0 for a in call.attrs.axis):
            return None
        rank = rank_of(call)
        if rank is None:
            return None
        return make(call.args[0], [int(a) % rank for a in call.attrs.axis])

    return rewrite


def _rank(expr) -> int | None:
    ndim = int(getattr(expr.ty, "ndim", -1))
    return ndim if ndim >= 0 else None


_REWRITES = {
    # expand_dims' axes index the result, squeeze's the input
    "relax.expand_dims": _positive(relax.op.expand_dims, lambda call: _rank(call)),
    "relax.squeeze": _positive(relax.op.squeeze, lambda call: _rank(call.args[0])),
}


@mutator
class _PositiveAxesMutator(PyExprMutator):
    def visit_call_(self, call: relax.Call) -> relax.Expr:
        call = super().visit_call_(call)
        rewrite = _REWRITES.get(call.op.name) if isinstance(call.op, tvm.ir.Op) else None
        new = rewrite(call) if rewrite else None
        return call if new is None else new


@tvm.transform.module_pass(opt_level=0, name="PositiveAxes")
class PositiveAxes:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        rewriter = _PositiveAxesMutator(mod)
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
        return relax.transform.Normalize()(rewriter.builder_.get())
