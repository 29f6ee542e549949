"""DropoutAsIdentity: at inference dropout passes its input through.

ONNX's Dropout imports as `nn.dropout(x)`, a tuple (output, mask), of which models read item 0.
In inference that item is x itself. Left in place, the tuple-valued op would stay on the host and
stop the channels-last layout pass (ConvertLayout cannot follow it), as in the ONNX zoo's AlexNet,
VGG and SqueezeNet. The unused dropout goes with dead-code elimination.
"""

import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator


@mutator
class _DropoutMutator(PyExprMutator):
    def visit_tuple_getitem_(self, op: relax.TupleGetItem) -> relax.Expr:
        op = super().visit_tuple_getitem_(op)
        source = op.tuple_value
        if isinstance(source, relax.Var):
            source = self.lookup_binding(source)
        if op.index == 0 and _is_dropout(source):
            return source.args[0]
        return op


def _is_dropout(expr) -> bool:
    return isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op) and expr.op.name == "relax.nn.dropout"


@tvm.transform.module_pass(opt_level=0, name="DropoutAsIdentity")
class DropoutAsIdentity:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        rewriter = _DropoutMutator(mod)
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
        return relax.transform.DeadCodeElimination()(relax.transform.CanonicalizeBindings()(rewriter.builder_.get()))
