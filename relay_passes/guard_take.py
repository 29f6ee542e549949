"""GuardTakeIndices: switch `R.take` from its unchecked "fast" mode to "clip".

TVM's fast take reads out of bounds (and can crash the process) on a bad index. The runtime
validates embedding ids before they arrive (see tvm_buda.compiled_model); this is the safety net.
"""

import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator


@mutator
class _TakeMutator(PyExprMutator):
    def visit_call_(self, call: relax.Call) -> relax.Expr:
        call = super().visit_call_(call)
        if isinstance(call.op, tvm.ir.Op) and call.op.name == "relax.take" and call.attrs.mode == "fast":
            return relax.op.take(call.args[0], call.args[1], axis=call.attrs.axis, mode="clip")
        return call


@tvm.transform.module_pass(opt_level=0, name="GuardTakeIndices")
class GuardTakeIndices:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        rewriter = _TakeMutator(mod)
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
        return rewriter.builder_.get()
