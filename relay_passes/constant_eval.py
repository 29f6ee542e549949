"""Evaluate a Relax call on constants in numpy, for the ops numpy computes bit for bit like TVM's
compiled kernels: data movement, comparisons, selection, integer and single IEEE float add /
subtract / multiply, and fills.

FoldConstants uses it before falling back to TVM's FoldConstant, which builds and runs one LLVM
function per folded call (25-45 ms each: DistilBERT's attention-mask chain is 16 of them, half a
second of its compile). Anything else (transcendentals, division, float -> int casts, ops whose
result shape numpy would not reproduce) returns None and goes to TVM.
"""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from .scalars import constant_array, type_shape

_BINARY = {
    "relax.add": np.add, "relax.subtract": np.subtract, "relax.multiply": np.multiply,
    "relax.equal": np.equal, "relax.not_equal": np.not_equal, "relax.less": np.less,
    "relax.less_equal": np.less_equal, "relax.greater": np.greater, "relax.greater_equal": np.greater_equal,
    "relax.logical_and": np.logical_and, "relax.logical_or": np.logical_or,
}
_ARITHMETIC = frozenset({"relax.add", "relax.subtract", "relax.multiply"})
_IEEE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # one correctly rounded operation, as in LLVM
_FILL = {"relax.zeros_like": 0, "relax.ones_like": 1, "relax.zeros": 0, "relax.ones": 1}


def _ints(expr) -> list[int] | None:
    """Integer literals of a Relax tuple / shape argument (strided_slice's axes, begin, end, strides)."""
    fields = expr.values if isinstance(expr, relax.ShapeExpr) else getattr(expr, "fields", None)
    if fields is None:
        return None
    values = [getattr(f, "value", f) for f in fields]
    values = [getattr(v, "value", v) for v in values]  # PrimValue -> IntImm -> int
    return [int(v) for v in values] if all(isinstance(v, int) for v in values) else None


def _axes(value) -> list[int] | None:
    return None if value is None else [int(a) for a in value]


def _strided_slice(x: np.ndarray, call) -> np.ndarray | None:
    axes, begin, end, strides = (_ints(a) for a in call.args[1:5])
    if None in (axes, begin, end) or (strides is not None and any(s <= 0 for s in strides)):
        return None
    strides = strides or [1] * len(axes)
    index = [slice(None)] * x.ndim
    for axis, b, e, s in zip(axes, begin, end, strides):
        index[axis] = slice(b, e, s)
    return x[tuple(index)]


def _astype(x: np.ndarray, dtype: np.dtype) -> np.ndarray | None:
    # float -> int/bool is undefined out of range in LLVM; TVM's FoldConstant leaves a cast of a
    # scalar alone: both left to TVM
    if (x.dtype.kind == "f" and dtype.kind != "f") or x.ndim == 0:
        return None
    return x.astype(dtype)


def _evaluate(call, args: list, dtype: np.dtype, shape: list[int]):
    name = call.op.name
    attrs = call.attrs
    if name in _BINARY:
        a, b = args
        if a is None or b is None or a.dtype != b.dtype:
            return None
        if name in ("relax.logical_and", "relax.logical_or") and a.dtype != np.bool_:
            return None
        if name in _ARITHMETIC and (a.dtype == np.bool_ or (a.dtype.kind == "f" and a.dtype not in _IEEE_FLOATS)):
            return None
        return _BINARY[name](a, b)
    if name == "relax.logical_not":
        return np.logical_not(args[0]) if args[0] is not None and args[0].dtype == np.bool_ else None
    if name == "relax.where":
        cond, a, b = args
        if cond is None or a is None or b is None or cond.dtype != np.bool_ or a.dtype != b.dtype:
            return None
        return np.where(cond, a, b)
    x = args[0]
    if name in ("relax.full_like", "relax.full"):
        fill = args[1]
        if fill is None or fill.size != 1 or fill.dtype != dtype:
            return None
        return np.full(shape, fill.reshape(()), dtype)
    if name in _FILL:
        return np.full(shape, _FILL[name], dtype)
    if x is None:
        return None
    if name == "relax.astype":
        return _astype(x, dtype)
    if name in ("relax.reshape", "relax.broadcast_to", "relax.flatten"):
        return np.broadcast_to(x, shape) if name == "relax.broadcast_to" else x.reshape(shape)
    if name == "relax.expand_dims":
        return np.expand_dims(x, tuple(_axes(attrs.axis)))
    if name == "relax.squeeze":
        return np.squeeze(x, None if attrs.axis is None else tuple(_axes(attrs.axis)))
    if name == "relax.permute_dims":
        return np.transpose(x, _axes(attrs.axes))
    if name == "relax.strided_slice":
        return _strided_slice(x, call)
    return None


def evaluate(call: relax.Call) -> tvm.ir.Constant | None:
    """The constant `call` folds to, computed in numpy, or None (not an op numpy reproduces exactly,
    or an argument that is not a tensor constant where one is needed)."""
    if not isinstance(call.op, tvm.ir.Op):
        return None
    if not isinstance(call.ty, relax.TensorType):  # a call rebuilt by a mutator is not typed yet
        try:
            call = relax.BlockBuilder().normalize(call)
        except tvm.TVMError:
            return None
    ty = call.ty
    shape = type_shape(ty)
    if shape is None:
        return None
    dtype = np.dtype(str(ty.dtype))
    args = [constant_array(a) for a in call.args]
    try:
        value = _evaluate(call, args, dtype, shape)
    except (ValueError, IndexError, TypeError):  # a form numpy does not take the same way: TVM decides
        return None
    if value is None or list(value.shape) != shape or value.dtype != dtype:
        return None
    return relax.const(np.array(value, order="C"), str(ty.dtype))  # (ascontiguousarray makes 0-d 1-d)
