"""`pybuda.op`: the ops a PyBudaModule's forward is written in. Each call runs eagerly on the
simulated device and returns a Tensor.

Every op takes a name first (unique within the module); for compatibility with older PyBuda
code, a leading module argument (`Matmul(self, "mm", a, b)`) is accepted and ignored.
"""

from __future__ import annotations

from .dispatch import run_op


def Matmul(name, operandA, operandB, bias=None):
    """y = a @ b (+ bias)."""
    inputs = [operandA, operandB] + ([bias] if bias is not None else [])
    return run_op("Matmul", name, inputs)


def Add(name, operandA, operandB):
    return run_op("Add", name, [operandA, operandB])


def Subtract(name, operandA, operandB):
    return run_op("Subtract", name, [operandA, operandB])


def Multiply(name, operandA, operandB):
    return run_op("Multiply", name, [operandA, operandB])


def Max(name, operandA, operandB):
    return run_op("Max", name, [operandA, operandB])


def Relu(name, operandA, threshold=0.0, mode="min"):
    if mode not in ("min", "max"):
        raise ValueError(f"Relu {name!r}: mode must be 'min' or 'max', got {mode!r}")
    return run_op("Relu", name, [operandA], threshold=float(threshold), mode=mode)


def Gelu(name, operandA, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"Gelu {name!r}: approximate must be 'none' or 'tanh', got {approximate!r}")
    return run_op("Gelu", name, [operandA], approximate=approximate)


def Transpose(name, operandA, dim0, dim1):
    return run_op("Transpose", name, [operandA], dim0=int(dim0), dim1=int(dim1))


def Permute(name, operandA, axes):
    """Reorder all dims (an extension; PyBuda spells this as a chain of Transposes)."""
    return run_op("Permute", name, [operandA], axes=tuple(int(a) for a in axes))


def Reshape(name, operandA, shape):
    return run_op("Reshape", name, [operandA], shape=tuple(int(d) for d in shape))


def Identity(name, operandA, unsqueeze=None, unsqueeze_dim=None):
    return run_op("Identity", name, [operandA])


from . import nn  # noqa: E402  (pybuda.op.nn)

__all__ = ["Add", "Gelu", "Identity", "Matmul", "Max", "Multiply", "Permute", "Relu", "Reshape", "Subtract",
           "Transpose", "nn"]
