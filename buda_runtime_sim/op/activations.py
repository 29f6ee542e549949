"""Activations (PyBuda API reference, "Activations"). Extensions: LeakyRelu, Tanh, GeluDerivative
(the Buda backend's SFPU op `gelu_derivative`, which Gelu's gradient uses)."""

from __future__ import annotations

from .dispatch import pybuda_op, run_op
from .validate import Args


@pybuda_op
def Relu(name, operandA, threshold=0.0, mode="min"):
    """mode "min": x where x > threshold else 0; mode "max": x where x < threshold else 0."""
    args = Args("Relu", name)
    return run_op("Relu", name, [operandA], threshold=args.float("threshold", threshold),
                  mode=args.choice("mode", mode, ("min", "max")))


@pybuda_op
def LeakyRelu(name, operandA, alpha):
    return run_op("LeakyRelu", name, [operandA], alpha=Args("LeakyRelu", name).float("alpha", alpha))


@pybuda_op
def Gelu(name, operandA, approximate="none"):
    approximate = Args("Gelu", name).choice("approximate", approximate, ("none", "tanh"))
    return run_op("Gelu", name, [operandA], approximate=approximate)


@pybuda_op
def GeluDerivative(name, operandA, approximate="none"):
    """d/dx Gelu(x); the gradient of a Gelu is this times the output's gradient."""
    approximate = Args("GeluDerivative", name).choice("approximate", approximate, ("none", "tanh"))
    return run_op("GeluDerivative", name, [operandA], approximate=approximate)


@pybuda_op
def Sigmoid(name, operandA):
    return run_op("Sigmoid", name, [operandA])


@pybuda_op
def Tanh(name, operandA):
    return run_op("Tanh", name, [operandA])
