"""TopOneAsMax: the value half of topk(x, k=1) is max(x, keepdims=True).

PyTorch's x.max(dim, keepdim=True) imports as topk(k=1) and a re-packed tuple of (values,
indices). The device has a max reduction but no topk, and the softmax reconstruction looks for
max. Tuple items of tuples built in the same function are resolved on the way; the unused topk
goes with dead-code elimination.
"""

import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator


@mutator
class _TopOneMutator(PyExprMutator):
    def _value(self, expr):
        """What a variable is bound to, following plain variable re-bindings."""
        while isinstance(expr, relax.Var):
            bound = self.lookup_binding(expr)
            if bound is None:
                return expr
            expr = bound
        return expr

    def visit_tuple_getitem_(self, op: relax.TupleGetItem) -> relax.Expr:
        op = super().visit_tuple_getitem_(op)
        source = self._value(op.tuple_value)
        if isinstance(source, relax.Tuple):
            return source.fields[op.index]
        if isinstance(source, relax.TupleGetItem):
            return op
        if op.index == 0 and _is_top_one(source):
            return relax.op.max(source.args[0], axis=[int(source.attrs.axis)], keepdims=True)
        return op


def _is_top_one(expr) -> bool:
    if not (isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op) and expr.op.name == "relax.topk"):
        return False
    a = expr.attrs
    return int(a.k) == 1 and bool(a.largest) and a.ret_type in ("both", "values")


@tvm.transform.module_pass(opt_level=0, name="TopOneAsMax")
class TopOneAsMax:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        rewriter = _TopOneMutator(mod)
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
        return relax.transform.CanonicalizeBindings()(rewriter.builder_.get())  # drop the aliases left
