"""Backward kernels: LayernormBw, SoftmaxBw and GeluDerivative, PyBuda's own backward ops
(tt-buda's op types `layernorm_bw` and `softmax_bw`, the Buda backend's SFPU op
`gelu_derivative`).

Each computes its whole gradient in float32 and rounds once to the output format, like the
forward Layernorm/Softmax/Gelu kernels: one op instead of a chain of 4-24 elementwise and
reduction ops, each of which would round. The float32 functions (`*_values`) are also what the
host runs when such an op falls back to the CPU (tvm_buda/grad_ops.py), so both sides compute
the same thing.
"""

from __future__ import annotations

import math

import numpy as np

from ..float_errors import ignored
from .common import OpArgumentError, axis, result
from .registry import kernel

# Which gradient a LayernormBw computes: PyBuda's backward is asked per operand of the forward op.
LAYERNORM_OPERANDS = {0: "input", 1: "weights", 2: "bias"}


def _along(values: np.ndarray, ndim: int, dim: int) -> np.ndarray:
    """A per-`dim` parameter (any shape holding its values) shaped to broadcast along `dim`."""
    shape = [1] * ndim
    shape[dim] = -1
    return values.reshape(shape)


def layernorm_bw_values(grad: np.ndarray, x: np.ndarray, gamma: np.ndarray, dim: int, epsilon: float,
                        operand: int) -> np.ndarray:
    """The gradient of layernorm(x, gamma, beta) along `dim` for operand 0 (x: x's shape), 1 (gamma)
    or 2 (beta), both summed over every other dim into gamma's shape. float32 throughout:
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = grad * gamma."""
    dim = dim % x.ndim
    others = tuple(d for d in range(x.ndim) if d != dim)
    if operand == 2:
        return grad.sum(axis=others, dtype=np.float32).reshape(gamma.shape)
    centred = x - x.mean(axis=dim, keepdims=True, dtype=np.float32)
    rstd = np.float32(1) / np.sqrt(np.mean(centred * centred, axis=dim, keepdims=True) + np.float32(epsilon))
    xhat = centred * rstd
    if operand == 1:
        return np.sum(grad * xhat, axis=others, dtype=np.float32).reshape(gamma.shape)
    g = grad * _along(gamma, x.ndim, dim)
    return rstd * (g - g.mean(axis=dim, keepdims=True) - xhat * np.mean(g * xhat, axis=dim, keepdims=True))


def softmax_bw_values(output: np.ndarray, grad: np.ndarray, dim: int) -> np.ndarray:
    """The gradient of softmax along `dim` from its output y: y * (grad - sum(grad * y))."""
    return output * (grad - np.sum(grad * output, axis=dim, keepdims=True))


_SQRT_HALF = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_C = math.sqrt(2 / math.pi)


def gelu_derivative_values(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    """d/dx gelu(x): Phi(x) + x * phi(x), or the derivative of the tanh approximation."""
    import torch

    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    if approximate == "tanh":
        inner = torch.tanh((t + 0.044715 * t * t * t) * _TANH_C)
        du = (1 + 3 * 0.044715 * t * t) * _TANH_C
        return (0.5 * (1 + inner) + 0.5 * t * (1 - inner * inner) * du).numpy()
    cdf = 0.5 * (1 + torch.special.erf(t * _SQRT_HALF))
    return (cdf + t * torch.exp(-0.5 * t * t) * _INV_SQRT_2PI).numpy()


def _same_shape(argument: str, t, like, like_name: str) -> None:
    if tuple(t.shape) != tuple(like.shape):
        raise OpArgumentError(argument, f"must have the shape of {like_name} {tuple(like.shape)}, got {tuple(t.shape)}")


@kernel("LayernormBw")
def layernorm_bw(inputs, attrs, numerics):
    """inputs: grad (of the Layernorm's output), operandA and weights of the forward Layernorm."""
    grad, a, gamma = inputs
    _same_shape("grad", grad, a, "operandA")
    dim = axis(attrs.get("dim", -1), max(a.ndim, 1))
    size = a.shape[dim] if a.shape else 1
    if math.prod(gamma.shape) != size:
        raise OpArgumentError("weights", f"must hold {size} values (the size of dim {dim}), got shape {gamma.shape}")
    operand = int(attrs.get("operand", 0))
    if operand not in LAYERNORM_OPERANDS:
        raise OpArgumentError("operand", f"must be one of {sorted(LAYERNORM_OPERANDS)}, got {operand}")
    shape = a.shape or (1,)
    with ignored():
        out = layernorm_bw_values(grad.logical().reshape(shape), a.logical().reshape(shape),
                                  gamma.logical().reshape(gamma.shape), dim, float(attrs.get("epsilon", 1e-5)), operand)
    return result(out.reshape(a.shape if operand == 0 else gamma.shape), numerics)


@kernel("SoftmaxBw")
def softmax_bw(inputs, attrs, numerics):
    """inputs: the forward Softmax's output and the gradient of that output."""
    output, grad = inputs
    _same_shape("grad", grad, output, "operandA")
    dim = axis(attrs["dim"], max(output.ndim, 1))
    shape = output.shape or (1,)
    with ignored():
        out = softmax_bw_values(output.logical().reshape(shape), grad.logical().reshape(shape), dim)
    return result(out.reshape(output.shape), numerics)


@kernel("GeluDerivative")
def gelu_derivative(inputs, attrs, numerics):
    a = inputs[0]
    with ignored():
        out = gelu_derivative_values(a.logical(), attrs.get("approximate", "none"))
    return result(out.reshape(a.shape), numerics)
