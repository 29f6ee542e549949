"""`pybuda.op.nn`: normalisation ops. Extension: LogSoftmax."""

from __future__ import annotations

from .dispatch import pybuda_op, run_op
from .validate import Args

__all__ = ["Layernorm", "LogSoftmax", "Softmax"]


@pybuda_op
def Softmax(name, operandA, *, dim, stable=True):
    """Softmax along `dim`; stable subtracts the maximum first."""
    args = Args("Softmax", name)
    return run_op("Softmax", name, [operandA], dim=args.int("dim", dim), stable=args.bool("stable", stable))


@pybuda_op
def LogSoftmax(name, operandA, *, dim, stable=True):
    args = Args("LogSoftmax", name)
    return run_op("LogSoftmax", name, [operandA], dim=args.int("dim", dim), stable=args.bool("stable", stable))


@pybuda_op
def Layernorm(name, operandA, weights, bias, dim=-1, epsilon=1e-5):
    args = Args("Layernorm", name)
    epsilon = args.float("epsilon", epsilon)
    if epsilon < 0:
        args.fail("epsilon", f"must be >= 0, got {epsilon}")
    return run_op("Layernorm", name, [operandA, weights, bias], dim=args.int("dim", dim), epsilon=epsilon)
