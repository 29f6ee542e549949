"""FillConstants: broadcast_to(constant, static shape) becomes the filled constant, in numpy.

ONNX's ConstantOfShape with a known shape imports as a broadcast of a scalar constant; the ONNX
zoo's light models make every weight that way (DenseNet-121: 836 of them). FoldConstant would
build and run one LLVM kernel per distinct shape (minutes on a light CNN); numpy fills them at once.
"""

import numpy as np
import tvm
from tvm import relax, tirx
from tvm.relax.expr_functor import PyExprMutator, mutator


@mutator
class _FillMutator(PyExprMutator):
    def visit_call_(self, call: relax.Call) -> relax.Expr:
        call = super().visit_call_(call)
        if not (isinstance(call.op, tvm.ir.Op) and call.op.name == "relax.broadcast_to"):
            return call
        value, shape = call.args
        if not isinstance(value, tvm.ir.Constant) or not isinstance(shape, relax.ShapeExpr):
            return call
        if not all(isinstance(d, tirx.IntImm) for d in shape.values):
            return call
        dims = tuple(int(d) for d in shape.values)
        return relax.const(np.ascontiguousarray(np.broadcast_to(value.value.numpy(), dims)), str(call.ty.dtype))


@tvm.transform.module_pass(opt_level=0, name="FillConstants")
class FillConstants:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        rewriter = _FillMutator(mod)
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
        return rewriter.builder_.get()
