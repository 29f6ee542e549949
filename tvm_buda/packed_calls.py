"""call_pure_packed calls (our backward ops, tvm_buda.grad_ops) through TVM's partition passes.

MergeCompositeFunctions cannot visit an ExternFunc, the function a call_pure_packed names, and
after FuseOpsByPattern one sits in two places: as an argument of a fused function the call was
matched into (FuseOpsByPattern lifts it into a parameter), and inside a call left on the host.
HidePackedFunctions, between the two passes, binds the first back into its fused function and
wraps the second in a private function taking only its tensors; RestorePackedCalls inlines
those wrappers again, so the host keeps the plain call the Relax VM runs.
"""

from __future__ import annotations

import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator

from .grad_ops import packed_name

_WRAPPER = "tvm_buda.hidden_packed_call"   # function attribute marking a wrapper


def _is_tensor(arg) -> bool:
    return isinstance(getattr(arg, "ty", None), relax.TensorType)


@mutator
class _Rewriter(PyExprMutator):
    """Rewrites the calls of `main`; functions it replaces are dropped from the module."""

    def __init__(self, mod: tvm.IRModule, restore: bool):
        super().__init__(mod)
        self.mod = mod
        self.restore = restore
        self.dropped = set()

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if self.restore:
            return self._inlined(call)
        if isinstance(call.op, tvm.ir.GlobalVar) and any(isinstance(a, relax.ExternFunc) for a in call.args):
            return self._bound(call)
        return self._wrapped(call) if packed_name(call) is not None else call

    def _bound(self, call):
        func = self.mod[call.op]
        bound = {p: a for p, a in zip(func.params, call.args) if isinstance(a, relax.ExternFunc)}
        self.dropped.add(call.op)
        gv = self.builder_.add_func(func.bind_params(bound), call.op.name_hint)
        return relax.Call(gv, [a for a in call.args if not isinstance(a, relax.ExternFunc)])

    def _wrapped(self, call):
        tensors = [a for a in call.args if _is_tensor(a)]
        params = [relax.Var(f"x{i}", a.ty) for i, a in enumerate(tensors)]
        slot = iter(params)
        inner = relax.Call(call.op, [next(slot) if _is_tensor(a) else a for a in call.args], call.attrs, call.ty_args)
        func = relax.Function(params, relax.SeqExpr([], inner), call.ty).with_attr(_WRAPPER, 1)
        return relax.Call(self.builder_.add_func(func, "hidden_" + packed_name(call).split(".")[-1]), tensors)

    def _inlined(self, call):
        if not isinstance(call.op, tvm.ir.GlobalVar):
            return call
        func = self.mod[call.op]
        if func.attrs is None or _WRAPPER not in func.attrs:
            return call
        self.dropped.add(call.op)
        values = dict(zip(func.params, call.args))
        inner = func.body.body
        if not isinstance(inner, relax.Call):   # normalised into a binding
            inner = func.body.blocks[-1].bindings[-1].value
        return relax.Call(inner.op, [values.get(a, a) for a in inner.args], inner.attrs, inner.ty_args)

    def run(self) -> tvm.IRModule:
        self.builder_.update_func(self.mod.get_global_var("main"), self.visit_expr(self.mod["main"]))
        mod = self.builder_.get()
        return tvm.IRModule({gv: f for gv, f in mod.functions.items() if gv not in self.dropped}, attrs=mod.attrs)


def HidePackedFunctions() -> tvm.transform.Pass:  # noqa: N802 (named like TVM's passes)
    @tvm.transform.module_pass(opt_level=0, name="HidePackedFunctions")
    def run(mod, _ctx):
        return _Rewriter(mod, restore=False).run()

    return run


def RestorePackedCalls() -> tvm.transform.Pass:  # noqa: N802
    @tvm.transform.module_pass(opt_level=0, name="RestorePackedCalls")
    def run(mod, _ctx):
        return _Rewriter(mod, restore=True).run()

    return run
