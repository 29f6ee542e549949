"""General ops (PyBuda API reference, "General"): matmul, elementwise arithmetic, reductions,
constants and identities. Extensions beyond the reference: Divide, ReduceMax, ReduceMin."""

from __future__ import annotations

from .dispatch import pybuda_op, run_op
from .validate import Args


@pybuda_op
def Matmul(name, operandA, operandB, bias=None):
    """y = a @ b (+ bias)."""
    return run_op("Matmul", name, [operandA, operandB] if bias is None else [operandA, operandB, bias])


@pybuda_op
def Add(name, operandA, operandB):
    return run_op("Add", name, [operandA, operandB])


@pybuda_op
def Subtract(name, operandA, operandB):
    return run_op("Subtract", name, [operandA, operandB])


@pybuda_op
def Multiply(name, operandA, operandB):
    return run_op("Multiply", name, [operandA, operandB])


@pybuda_op
def Divide(name, operandA, operandB):
    """a / b, computed as a times Reciprocal(b) (an extension)."""
    return run_op("Divide", name, [operandA, operandB])


def _reduce(op_type: str, name, operandA, dim, keep_dim):
    if type(dim) is not int or type(keep_dim) is not bool:   # (these pass Args as they are)
        args = Args(op_type, name)
        dim, keep_dim = args.int("dim", dim), args.bool("keep_dim", keep_dim)
    return run_op(op_type, name, [operandA], dim=dim, keep_dim=keep_dim)


@pybuda_op
def ReduceSum(name, operandA, dim, keep_dim=True):
    """Sum along `dim`; the dim stays with size 1 (keep_dim=False, an extension, drops it)."""
    return _reduce("ReduceSum", name, operandA, dim, keep_dim)


@pybuda_op
def ReduceAvg(name, operandA, dim, keep_dim=True):
    """Mean along `dim`; the dim stays with size 1 (keep_dim=False, an extension, drops it)."""
    return _reduce("ReduceAvg", name, operandA, dim, keep_dim)


@pybuda_op
def ReduceMax(name, operandA, dim, keep_dim=True):
    """Maximum along `dim` (an extension, as in later PyBuda versions)."""
    return _reduce("ReduceMax", name, operandA, dim, keep_dim)


@pybuda_op
def ReduceMin(name, operandA, dim, keep_dim=True):
    """Minimum along `dim` (an extension)."""
    return _reduce("ReduceMin", name, operandA, dim, keep_dim)


@pybuda_op
def Constant(name, *, constant, shape=None):
    """A tensor holding `constant`: shape (1, 1), or `shape` (an extension)."""
    args = Args("Constant", name)
    attrs = {"constant": args.float("constant", constant)}
    if shape is not None:
        attrs["shape"] = args.shape("shape", shape)
    return run_op("Constant", name, [], **attrs)


@pybuda_op
def Identity(name, operandA, unsqueeze=None, unsqueeze_dim=None):
    """The operand unchanged; with `unsqueeze` set, a size-1 dim is inserted at `unsqueeze_dim`."""
    if unsqueeze is None:
        return run_op("Identity", name, [operandA])
    args = Args("Identity", name)
    return run_op("Identity", name, [operandA], unsqueeze=str(unsqueeze),
                  unsqueeze_dim=args.int("unsqueeze_dim", unsqueeze_dim))


@pybuda_op
def Buffer(name, operandA):
    """The operand unchanged; unlike Identity it is never optimised away."""
    return run_op("Buffer", name, [operandA])
