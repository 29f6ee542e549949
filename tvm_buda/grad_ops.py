"""Backward ops the device runs as single ops (PyBuda's `layernorm_bw`, `softmax_bw` and the
backend's `gelu_derivative`), written in Relax as `call_pure_packed` of global functions
registered here.

Why this form: TVM 0.27 registers Relax ops in C++ only (each needs its struct-info inference),
and matching the elementwise chains they replace would mean patterns of up to 24 ops that every
graph pass may reshape. A `call_pure_packed` is one pure call with a declared result type, which
autodiff, CSE, DCE and our passes carry like any op; the op table matches it by the function's
name (`OpEntry.relax_op`) and code generation lowers it to one PyBuda op. Where it stays on the
host (CPU fallback, or the module built with plain TVM) the Relax VM calls the function registered
below, which computes in float32 with the simulator kernel's own functions
(buda_runtime_sim/kernels/nn_grad.py). Attributes travel as trailing immediate arguments.
"""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax, tirx

from buda_runtime_sim.kernels.nn_grad import gelu_derivative_values, layernorm_bw_values, softmax_bw_values

PREFIX = "tvm_buda."
LAYERNORM_BW, SOFTMAX_BW, GELU_DERIVATIVE = (PREFIX + n for n in ("layernorm_bw", "softmax_bw", "gelu_derivative"))
_APPROXIMATIONS = ("none", "tanh")   # gelu_derivative's approximate attribute, passed as its index


# ---- Relax calls ----------------------------------------------------------------------------
def _int(value: int):
    return tirx.IntImm("int64", int(value))


def _like(expr, shape=None) -> relax.TensorType:
    ty = expr.ty
    return relax.TensorType(ty.shape if shape is None else shape, ty.dtype)


def layernorm_bw(grad, x, gamma, axis: int, epsilon: float, operand: int) -> relax.Call:
    """The gradient of layer_norm(x, gamma, beta, [axis], epsilon) for operand 0 (x), 1 (gamma)
    or 2 (beta) from the output's gradient."""
    result = _like(x) if operand == 0 else _like(gamma)
    return relax.call_pure_packed(LAYERNORM_BW, grad, x, gamma, _int(axis), tirx.FloatImm("float64", float(epsilon)),
                                  _int(operand), ty_args=result)


def softmax_bw(output, grad, axis: int) -> relax.Call:
    """The gradient of softmax(x, axis) from its output and the output's gradient."""
    return relax.call_pure_packed(SOFTMAX_BW, output, grad, _int(axis), ty_args=_like(output))


def gelu_derivative(x, approximate: str = "none") -> relax.Call:
    return relax.call_pure_packed(GELU_DERIVATIVE, x, _int(_APPROXIMATIONS.index(approximate)), ty_args=_like(x))


def packed_name(call: relax.Call) -> str | None:
    """The global function a call_pure_packed calls, None for any other call."""
    if isinstance(call.op, tvm.ir.Op) and call.op.name == "relax.call_pure_packed" and call.args:
        func = call.args[0]
        return str(func.global_symbol) if isinstance(func, relax.ExternFunc) else None
    return None


def attribute(call: relax.Call, index: int):
    """The Python value of the immediate argument `index` (after the function) of a packed call."""
    return call.args[1 + index].value


def approximation(call: relax.Call) -> str:
    return _APPROXIMATIONS[int(attribute(call, 1))]


# ---- host implementations (the Relax VM calls them by name) ----------------------------------
def _host(compute):
    """Run a float32 function on tvm tensors; the result in the first operand's dtype."""

    def run(*args):
        arrays = [a.numpy() if isinstance(a, tvm.runtime.Tensor) else a for a in args]
        first = next(a for a in arrays if isinstance(a, np.ndarray))
        floats = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in arrays]
        with np.errstate(all="ignore"):
            out = np.asarray(compute(*floats), dtype=np.float32)
        return tvm.runtime.tensor(np.ascontiguousarray(out.astype(first.dtype, copy=False)))

    return run


tvm.register_global_func(LAYERNORM_BW, _host(
    lambda grad, x, gamma, axis, eps, operand: layernorm_bw_values(grad, x, gamma, int(axis), float(eps), int(operand))),
    override=True)
tvm.register_global_func(SOFTMAX_BW, _host(
    lambda output, grad, axis: softmax_bw_values(output, grad, int(axis))), override=True)
tvm.register_global_func(GELU_DERIVATIVE, _host(
    lambda x, approximate: gelu_derivative_values(x, _APPROXIMATIONS[int(approximate)])), override=True)
