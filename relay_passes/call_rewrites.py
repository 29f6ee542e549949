"""Passes that replace single calls, driven by a table: op name -> rewrite(call), which returns the
expression to use instead or None to keep the call. One mutator and one module loop serve every
such pass; the attribute readers below are what the rewrites share."""

from __future__ import annotations

from typing import Callable, Mapping

import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator

Rewrite = Callable[[relax.Call], "relax.Expr | None"]


@mutator
class _CallRewriter(PyExprMutator):
    def __init__(self, mod: tvm.IRModule, rewrites: Mapping[str, Rewrite]):
        super().__init__(mod)
        self.rewrites = rewrites

    def visit_call_(self, call: relax.Call) -> relax.Expr:
        call = super().visit_call_(call)
        rewrite = self.rewrites.get(call.op.name) if isinstance(call.op, tvm.ir.Op) else None
        new = rewrite(call) if rewrite else None
        return call if new is None else new


def rewrite_calls(mod: tvm.IRModule, rewrites: Mapping[str, Rewrite]) -> tvm.IRModule:
    """Every Relax function of `mod` with its calls rewritten (inner calls first), normalised."""
    rewriter = _CallRewriter(mod, rewrites)
    for gvar, func in list(mod.functions.items()):
        if isinstance(func, relax.Function):
            rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
    return relax.transform.Normalize()(rewriter.builder_.get())


def ints(values) -> list[int]:
    """An attribute's integer array (strides, padding, ...) as Python ints."""
    return [int(v) for v in values]


def out_dtype(dtype) -> str | None:
    """An op's out_dtype attribute, or None where it is unset ("", "None" or "void")."""
    text = str(dtype) if dtype is not None else ""
    return text if text and text not in ("None", "void") else None
