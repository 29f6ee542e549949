"""`pybuda.op.nn`: normalisation ops and their backward ops (PyBuda's `layernorm_bw`, `softmax_bw`,
which training graphs use). Extension: LogSoftmax."""

from __future__ import annotations

from .dispatch import pybuda_op, run_op
from .validate import Args

__all__ = ["Layernorm", "LayernormBw", "LogSoftmax", "Softmax", "SoftmaxBw"]


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


@pybuda_op
def SoftmaxBw(name, operandA, grad, *, dim):
    """The gradient of a Softmax along `dim` from its output (operandA) and the output's gradient."""
    return run_op("SoftmaxBw", name, [operandA, grad], dim=Args("SoftmaxBw", name).int("dim", dim))


@pybuda_op
def LayernormBw(name, grad, operandA, weights, dim=-1, epsilon=1e-5, operand=0):
    """The gradient of `Layernorm(operandA, weights, bias, dim, epsilon)` from its output's
    gradient, for operand 0 (operandA's shape), 1 (weights) or 2 (bias; the sum of grad over
    every dim but `dim`), in weights' shape."""
    args = Args("LayernormBw", name)
    epsilon = args.float("epsilon", epsilon)
    if epsilon < 0:
        args.fail("epsilon", f"must be >= 0, got {epsilon}")
    operand = args.int("operand", operand)
    if operand not in (0, 1, 2):
        args.fail("operand", f"must be 0 (input), 1 (weights) or 2 (bias), got {operand}")
    return run_op("LayernormBw", name, [grad, operandA, weights], dim=args.int("dim", dim), epsilon=epsilon,
                  operand=operand)
