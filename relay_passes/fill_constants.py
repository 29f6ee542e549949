"""FillConstants: broadcast_to(constant, static shape) and arange(literals) become constants, in numpy.

ONNX's ConstantOfShape with a known shape imports as a broadcast of a scalar constant; the ONNX
zoo's light models make every weight that way (DenseNet-121: 836 of them). FoldConstant would
build and run one LLVM kernel per distinct shape (minutes on a light CNN); numpy fills them at once.
TVM's FoldConstant does not fold arange at all (no tensor arguments); PyTorch's reflection and
replication pads compute their gather index from one, which must be constant to become slices.
"""

import numpy as np
import tvm
from tvm import relax, tirx
from tvm.relax.expr_functor import PyExprMutator, mutator


@mutator
class _FillMutator(PyExprMutator):
    def visit_call_(self, call: relax.Call) -> relax.Expr:
        call = super().visit_call_(call)
        if isinstance(call.op, tvm.ir.Op) and call.op.name == "relax.arange":
            return _arange(call)
        if not (isinstance(call.op, tvm.ir.Op) and call.op.name == "relax.broadcast_to"):
            return call
        value, shape = call.args
        if not isinstance(value, tvm.ir.Constant) or not isinstance(shape, relax.ShapeExpr):
            return call
        if not all(isinstance(d, tirx.IntImm) for d in shape.values):
            return call
        dims = tuple(int(d) for d in shape.values)
        # .copy(), not np.ascontiguousarray: that makes a 0-d result 1-d, and whatever uses the
        # constant is then typed with a dim too many (BEiT's relative position index)
        return relax.const(np.broadcast_to(value.value.numpy(), dims).copy(), str(call.ty.dtype))


def _arange(call: relax.Call) -> relax.Expr:
    values = [getattr(a, "value", None) for a in call.args]  # IntImm / FloatImm literals
    if not all(isinstance(v, (int, float)) for v in values):
        return call
    start, stop, step = values
    dtype = str(call.ty.dtype)
    values = np.arange(start, stop, step).astype(dtype)
    shape = getattr(call.ty, "shape", None)
    if shape is None or [int(d) for d in shape] != list(values.shape):
        return call  # TVM counts the elements differently: leave it to TVM
    return relax.const(values, dtype)


@tvm.transform.module_pass(opt_level=0, name="FillConstants")
class FillConstants:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        rewriter = _FillMutator(mod)
        for gvar, func in list(mod.functions.items()):
            if isinstance(func, relax.Function):
                rewriter.builder_.update_func(gvar, rewriter.visit_expr(func))
        return rewriter.builder_.get()
