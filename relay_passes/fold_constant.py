"""FoldConstants: Relax's FoldConstant, without legalizing every op of the model to find the few
calls it can fold.

TVM 0.27's FoldConstant lowers *every* call in a dataflow block to TIR (call_te, PrimFunc
creation) and only then checks whether its arguments are constants: on BERT-base that is ~830
lowerings for ~12 folds, most of the pass's several seconds and a tenth of a cold compile.
Here a call is handed to TVM's FoldConstant only when nothing it reads is a variable (all leaves
are constants, shapes or immediates, looking through bindings as FoldConstant does), one call
at a time in a one-binding module, results cached by structural equality; the rest of
FoldConstant's rewrite (a variable bound to a constant or a shape is replaced by that value
where used) is done here. Calls numpy computes exactly like TVM's kernels (constant_eval.py:
masks, slices, casts, layout changes) are folded in numpy rather than by building an LLVM function
each. The result is the module TVM's pass returns (tested on real models and per op), except one
case: a shape-only fill (full_like / zeros_like / ones_like of a variable) whose result would take
more than LARGE_FILL_BYTES stays a call. PyTorch's safe-softmax guard fills a zeros tensor the
size of every layer's attention scores; folded, BERT-Large at batch 64 held 24 constants of 604 MB
during compile (16 GB), for a tensor SimplifySafeSoftmaxGuard replaces by a scalar right after.
"""

from __future__ import annotations

import numpy as np
import tvm
import tvm_ffi
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator

from .constant_eval import evaluate


@mutator
class _Folder(PyExprMutator):
    def __init__(self, mod: tvm.IRModule, cache: list):
        super().__init__(mod)
        self.cache = cache                 # [(call, folded)]: structural equality, not hashable here
        self.in_dataflow = False
        self.constants = {}                # dataflow var -> the constant it folded to

    def visit_dataflow_block_(self, block):
        self.in_dataflow = True
        try:
            return super().visit_dataflow_block_(block)
        finally:
            self.in_dataflow = False

    def visit_var_binding_(self, binding):
        """As FoldConstant: a dataflow variable whose value folds to a constant is not bound; its
        uses get the constant."""
        value = self.visit_expr(binding.value)
        if isinstance(binding.var, relax.DataflowVar) and isinstance(value, tvm.ir.Constant):
            self.constants[binding.var] = value
            return
        self.builder_.emit_normalized(binding if value.same_as(binding.value) else relax.VarBinding(binding.var, value))

    def visit_var_(self, var):
        bound = self.constants.get(var)
        if bound is None:
            bound = self.lookup_binding(var)
        return bound if isinstance(bound, tvm.ir.Constant) else super().visit_var_(var)

    def visit_dataflow_var_(self, var):
        bound = self.constants.get(var)
        return bound if bound is not None else super().visit_dataflow_var_(var)

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not isinstance(call.op, tvm.ir.Op):
            return call
        args = [self._shape_value(a) for a in call.args]
        if any(a is not b for a, b in zip(args, call.args)):
            call = relax.Call(call.op, args, call.attrs, call.ty_args, call.span)
        shape_only = call.op.name in _SHAPE_ONLY
        if self.in_dataflow and all(_constant_leaves(a) for a in (args[1:] if shape_only else args)):
            if shape_only and _bytes(args[0]) > LARGE_FILL_BYTES:
                return call
            return self._fold(call, shape_only)
        return call

    def _shape_value(self, arg):
        if isinstance(arg, relax.Var):
            bound = self.lookup_binding(arg)
            if isinstance(bound, relax.ShapeExpr):
                return bound
        return arg

    def _fold(self, call, shape_only: bool):
        for seen, folded in self.cache:
            if tvm_ffi.structural_equal(seen, call, map_free_vars=shape_only):
                return folded
        folded = evaluate(call)
        if folded is None:
            folded = self._fold_with_tvm(call, shape_only)
        self.cache.append((call, folded))
        return folded

    @staticmethod
    def _fold_with_tvm(call, shape_only: bool):
        builder = relax.BlockBuilder()
        params = [relax.Var("like", call.args[0].ty)] if shape_only else []
        with builder.function("main", params):
            with builder.dataflow():
                out = builder.emit_output(relax.Call(call.op, params + list(call.args[len(params):]), call.attrs,
                                                     call.ty_args, call.span) if shape_only else call)
            builder.emit_func_output(out)
        mod = relax.transform.FoldConstant()(builder.get())
        body = mod["main"].body
        value = body.body
        if isinstance(value, relax.Var):
            value = next((b.value for block in body.blocks for b in block.bindings if b.var.same_as(value)), None)
        return value if isinstance(value, tvm.ir.Constant) else call


LARGE_FILL_BYTES = 16 << 20     # a shape-only fill larger than this is not folded (see the module doc)


def _bytes(expr) -> int:
    """Bytes of a tensor expression with a static shape (0 when unknown)."""
    info = getattr(expr, "ty", None)
    shape = getattr(info, "shape", None)
    values = getattr(shape, "values", None)
    try:
        dims = [int(v) for v in values]
    except (TypeError, ValueError):                      # (None, or a symbolic dim)
        return 0
    size = 1
    for d in dims:
        size *= d
    return size * np.dtype(str(info.dtype)).itemsize


# Ops whose first argument contributes only its (static) shape: TVM lowers them without reading it,
# so FoldConstant folds them whatever that argument is.
_SHAPE_ONLY = frozenset({"relax.full_like", "relax.zeros_like", "relax.ones_like"})


def _constant_leaves(expr) -> bool:
    """Nothing in `expr` is computed at run time: constants, shapes, immediates (tuples of them)."""
    if isinstance(expr, relax.Tuple):
        return all(_constant_leaves(f) for f in expr.fields)
    return not isinstance(expr, (relax.Var, relax.Call, relax.TupleGetItem, relax.If, relax.SeqExpr, relax.Function))


@tvm.transform.module_pass(opt_level=0, name="FoldConstants")
class FoldConstants:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        folder = _Folder(mod, [])
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                folder.builder_.update_func(gvar, folder.visit_expr(func))
        return folder.builder_.get()
