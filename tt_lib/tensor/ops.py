"""tt_lib.tensor ops, computed by the simulator's kernels on the operands' device.

Each op runs in the data format of its first operand at math fidelity HiFi4 (TT-Dispatch ops
default to full fidelity), accumulating in Float32 on Wormhole_B0 and Float16_b on Grayskull
(which has no Float32 accumulation).
"""

from __future__ import annotations

import itertools
from enum import Enum

import numpy as np

from buda_runtime_sim import context, op
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.numerics_config import NumericsConfig

from ..device import Arch
from .core import Tensor

_names = itertools.count()


class ReduceOpMath(Enum):
    SUM = "sum"
    MAX = "max"


class ReduceOpDim(Enum):
    H = (-2,)
    W = (-1,)
    HW = (-2, -1)


def _operands(what: str, *tensors: Tensor):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"tt_lib.tensor.{what}: operand {i} is a {type(t).__name__}, not a tt_lib Tensor")
        if t.device() is None:
            raise RuntimeError(f"tt_lib.tensor.{what}: operand {i} is on the host; move it with .to(device)")
    device = tensors[0].device()
    if any(t.device() is not device for t in tensors[1:]):
        raise RuntimeError(f"tt_lib.tensor.{what}: operands are on different devices")
    device.check_usable(f"tt_lib.tensor.{what}")
    return device


def _run(what: str, compute, *tensors: Tensor) -> Tensor:
    device = _operands(what, *tensors)
    first = tensors[0]
    fp32_acc = device.arch == Arch.WORMHOLE_B0
    numerics = NumericsConfig(default_df_override=first.dtype().value, math_fidelity=MathFidelity.HiFi4,
                              accumulate_df=DataFormat.Float32 if fp32_acc else DataFormat.Float16_b)
    with context.use(context.ExecutionContext(numerics=numerics)):
        result = compute(f"tt_lib.{what}_{next(_names)}", *(t._storage for t in tensors))
    return Tensor._on_device(result, first.dtype(), first.layout(), device)


def _eltwise(name: str, pybuda_op, doc: str):
    def eltwise(a: Tensor, b: Tensor) -> Tensor:
        if a.shape() != b.shape():
            raise ValueError(f"tt_lib.tensor.{name}: shapes {a.shape()} and {b.shape()} differ; "
                             "eltwise ops need equal shapes")
        return _run(name, pybuda_op, a, b)

    eltwise.__name__ = eltwise.__qualname__ = name
    eltwise.__doc__ = doc
    return eltwise


add = _eltwise("add", op.Add, "a + b (equal shapes).")
sub = _eltwise("sub", op.Subtract, "a - b (equal shapes).")
mul = _eltwise("mul", op.Multiply, "a * b (equal shapes).")


def _check_inner(what: str, a: Tensor, b: Tensor) -> None:
    if a.shape()[-1] != b.shape()[-2]:
        raise ValueError(f"tt_lib.tensor.{what}: inner dims differ: {a.shape()} @ {b.shape()}")


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """[N, C, M, K] @ [1, 1, K, N'] (b broadcast over the batch dims)."""
    _check_inner("matmul", a, b)
    if any(d != 1 for d in b.shape()[:-2]):
        raise ValueError(f"tt_lib.tensor.matmul: b must have batch dims of 1, got {b.shape()}; use bmm")
    return _run("matmul", op.Matmul, a, b)


def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Batched matmul: equal batch dims."""
    _check_inner("bmm", a, b)
    if a.shape()[:-2] != b.shape()[:-2]:
        raise ValueError(f"tt_lib.tensor.bmm: batch dims differ: {a.shape()} and {b.shape()}")
    return _run("bmm", op.Matmul, a, b)


def _unary(name: str, pybuda_op, doc: str):
    def unary(a: Tensor) -> Tensor:
        return _run(name, pybuda_op, a)

    unary.__name__ = unary.__qualname__ = name
    unary.__doc__ = doc
    return unary


relu = _unary("relu", op.Relu, "max(x, 0).")
gelu = _unary("gelu", op.Gelu, "GELU (erf form).")
exp = _unary("exp", op.Exp, "e ** x.")
recip = _unary("recip", op.Reciprocal, "1 / x.")
sqrt = _unary("sqrt", op.Sqrt, "Square root.")
sigmoid = _unary("sigmoid", op.Sigmoid, "1 / (1 + e ** -x).")
log = _unary("log", op.Log, "Natural logarithm.")


def softmax(a: Tensor) -> Tensor:
    """Softmax over the last dim."""
    return _run("softmax", lambda name, x: op.nn.Softmax(name, x, dim=-1), a)


def layernorm(a: Tensor, eps: float = 1e-5, gamma: Tensor | None = None, beta: Tensor | None = None) -> Tensor:
    """Layer norm over the last dim; gamma and beta (shape [.., 1, W]) default to 1 and 0."""
    width = a.shape()[-1]
    extra = [t for t in (gamma, beta) if t is not None]
    if len(extra) == 1:
        raise ValueError("tt_lib.tensor.layernorm: give both gamma and beta, or neither")

    def compute(name, x, g=None, b=None):
        g = g if g is not None else np.ones((width,), np.float32)
        b = b if b is not None else np.zeros((width,), np.float32)
        return op.nn.Layernorm(name, x, g, b, dim=-1, epsilon=float(eps))

    return _run("layernorm", compute, a, *extra)


def transpose(a: Tensor, dim0: int = -2, dim1: int = -1) -> Tensor:
    """Swap two dims (H and W by default, TT-Dispatch's WH transpose)."""
    return _run("transpose", lambda name, x: op.Transpose(name, x, dim0, dim1), a)


def reshape(a: Tensor, *shape) -> Tensor:
    """reshape(a, N, C, H, W) or reshape(a, [N, C, H, W]); one dim may be -1."""
    dims = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else list(shape)
    size = int(np.prod(a.shape()))
    if dims.count(-1) == 1:
        known = int(np.prod([d for d in dims if d != -1]))
        dims[dims.index(-1)] = size // known if known else 0
    if int(np.prod(dims)) != size or any(d <= 0 for d in dims):
        raise ValueError(f"tt_lib.tensor.reshape: cannot reshape {a.shape()} ({size} values) into {list(shape)}")
    return _run("reshape", lambda name, x: op.Reshape(name, x, tuple(dims)), a)


def reduce(a: Tensor, math_op: ReduceOpMath, dim: ReduceOpDim, scaler: float = 1.0) -> Tensor:
    """Sum or max over H, W or both (dims kept with size 1); sums are multiplied by `scaler`."""
    if not isinstance(math_op, ReduceOpMath) or not isinstance(dim, ReduceOpDim):
        raise TypeError("tt_lib.tensor.reduce: give a ReduceOpMath and a ReduceOpDim")
    if math_op == ReduceOpMath.MAX and scaler != 1.0:
        raise ValueError("tt_lib.tensor.reduce: scaler applies to SUM only")
    reduce_fn = op.ReduceSum if math_op == ReduceOpMath.SUM else op.ReduceMax

    def compute(name, x):
        for i, d in enumerate(dim.value):
            x = reduce_fn(f"{name}.{i}", x, d)
        return op.Multiply(f"{name}.scale", x, np.float32(scaler)) if scaler != 1.0 else x

    return _run("reduce", compute, a)
