"""Math ops (PyBuda API reference, "Math"). Extensions: Sin, Cos, Erf, Pow, Power, Min,
comparisons, logic and Where (truth values are 1.0 / 0.0 on the device)."""

from __future__ import annotations

import math

from .dispatch import pybuda_op, run_op
from .validate import Args


def _unary(op_type: str, doc: str):
    @pybuda_op
    def op(name, operandA):
        return run_op(op_type, name, [operandA])

    op.__name__ = op.__qualname__ = op_type
    op.__doc__ = doc
    return op


def _binary(op_type: str, doc: str):
    @pybuda_op
    def op(name, operandA, operandB):
        return run_op(op_type, name, [operandA, operandB])

    op.__name__ = op.__qualname__ = op_type
    op.__doc__ = doc
    return op


Exp = _unary("Exp", "e ** x.")
Reciprocal = _unary("Reciprocal", "1 / x.")
Sqrt = _unary("Sqrt", "Square root.")
Log = _unary("Log", "Natural logarithm.")
Abs = _unary("Abs", "|x|.")
Sin = _unary("Sin", "Sine.")
Cos = _unary("Cos", "Cosine.")
Erf = _unary("Erf", "The Gauss error function.")
LogicalNot = _unary("LogicalNot", "1 where x == 0, else 0.")

Max = _binary("Max", "Elementwise maximum of two tensors.")
Min = _binary("Min", "Elementwise minimum of two tensors.")
Power = _binary("Power", "a ** b elementwise.")
Heaviside = _binary("Heaviside", "0 where a < 0, b where a == 0, 1 where a > 0.")
Equal = _binary("Equal", "1 where a == b, else 0.")
NotEqual = _binary("NotEqual", "1 where a != b, else 0.")
Greater = _binary("Greater", "1 where a > b, else 0.")
GreaterEqual = _binary("GreaterEqual", "1 where a >= b, else 0.")
Less = _binary("Less", "1 where a < b, else 0.")
LessEqual = _binary("LessEqual", "1 where a <= b, else 0.")
LogicalAnd = _binary("LogicalAnd", "1 where both are non-zero, else 0.")
LogicalOr = _binary("LogicalOr", "1 where either is non-zero, else 0.")


@pybuda_op
def Where(name, condition, operandA, operandB):
    """operandA where condition is non-zero, else operandB (all three broadcast)."""
    return run_op("Where", name, [condition, operandA, operandB])


@pybuda_op
def Clip(name, operandA, min, max):  # noqa: A002 - PyBuda's argument names
    args = Args("Clip", name)
    low, high = args.float("min", min), args.float("max", max)
    if math.isnan(low) or math.isnan(high) or low > high:
        args.fail("min", f"must not exceed max, got min={low}, max={high}")
    return run_op("Clip", name, [operandA], min=low, max=high)


@pybuda_op
def Pow(name, operandA, exponent):
    """x ** exponent for a constant exponent."""
    return run_op("Pow", name, [operandA], exponent=Args("Pow", name).float("exponent", exponent))


@pybuda_op
def Argmax(name, operandA, dim=None, keep_dim=True):
    """Index of the maximum along `dim` (over all values when None), as exact integers."""
    args = Args("Argmax", name)
    return run_op("Argmax", name, [operandA], dim=None if dim is None else args.int("dim", dim),
                  keep_dim=args.bool("keep_dim", keep_dim))
