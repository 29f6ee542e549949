"""`pybuda.op.nn`: normalisation ops."""

from .dispatch import run_op

__all__ = ["Layernorm", "Softmax"]


def Softmax(name, operandA, *, dim, stable=True):
    return run_op("Softmax", name, [operandA], dim=int(dim), stable=bool(stable))


def Layernorm(name, operandA, weights, bias, dim=-1, epsilon=1e-5):
    return run_op("Layernorm", name, [operandA, weights, bias], dim=int(dim), epsilon=float(epsilon))
