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
import threading

import numpy as np

from ..bf16_gemm import torch_module
from ..float_errors import ignored
from .common import OpArgumentError, axis, result
from .registry import kernel

# Which gradient a LayernormBw computes: PyBuda's backward is asked per operand of the forward op.
LAYERNORM_OPERANDS = {0: "input", 1: "weights", 2: "bias"}


def layernorm_bw_values(grad: np.ndarray, x: np.ndarray, gamma: np.ndarray, dim: int, epsilon: float,
                        operand: int) -> np.ndarray:
    """The gradient of layernorm(x, gamma, beta) along `dim` for operand 0 (x: x's shape), 1 (gamma)
    or 2 (beta), both summed over every other dim into gamma's shape, in float32:
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = grad * gamma; dgamma = sum(grad * xhat)."""
    return layernorm_gradients(grad, x, gamma, dim, epsilon, (operand,))[operand]


def layernorm_gradients(grad: np.ndarray, x: np.ndarray, gamma: np.ndarray, dim: int, epsilon: float,
                        operands) -> dict:
    """{operand: float32 gradient} for each of `operands` (see layernorm_bw_values). The statistics
    and the input and weight gradients come from torch's layer-norm kernels, both gradients from
    one backward call (one vectorised pass each, twice as fast as the ~18 numpy passes of the
    formula at BERT sizes; each gradient's values do not depend on which others are asked for)."""
    torch = torch_module()
    dim = dim % x.ndim
    out = {}
    if 2 in operands:
        out[2] = grad.sum(axis=tuple(d for d in range(x.ndim) if d != dim), dtype=np.float32).reshape(gamma.shape)
    if 0 not in operands and 1 not in operands:
        return out
    last = dim == x.ndim - 1            # the usual case: no axis moves (np.moveaxis costs ~3 us a call)
    tg, tx = (torch.from_numpy(np.ascontiguousarray(a if last else np.moveaxis(a, dim, -1), dtype=np.float32))
              for a in (grad, x))
    tw = torch.from_numpy(np.ascontiguousarray(gamma, dtype=np.float32).reshape(-1))
    size = [x.shape[dim]]
    # Only mean and rstd are used. torch computes them before, and apart from, the weight (its CPU
    # kernel, aten/src/ATen/native/cpu/layer_norm_kernel.cpp: RowwiseMoments per row), but without
    # a weight it writes the discarded output in a scalar loop: passing it is ~4 us less a call
    # (tests/buda_runtime_sim/test_kernel_fast_paths.py checks the statistics do not change).
    _, mean, rstd = torch.ops.aten.native_layer_norm(tx, size, tw, None, float(epsilon))
    dx, dgamma, _ = torch.ops.aten.native_layer_norm_backward(tg, tx, size, mean, rstd, tw, None,
                                                              [0 in operands, 1 in operands, False])
    if 1 in operands:
        out[1] = dgamma.numpy().reshape(gamma.shape)
    if 0 in operands:
        out[0] = dx.numpy() if last else np.moveaxis(dx.numpy(), -1, dim)
    return out


def softmax_bw_values(output: np.ndarray, grad: np.ndarray, dim: int) -> np.ndarray:
    """The gradient of softmax along `dim` from its output y: y * (grad - sum(grad * y))."""
    out = grad * output
    if type(out) is not np.ndarray or out.dtype != np.float32 or output.dtype != np.float32 or grad.dtype != np.float32:
        return output * (grad - np.sum(out, axis=dim, keepdims=True))
    # the same ufuncs on float32 (np.sum is add.reduce), into one buffer
    return np.multiply(output, np.subtract(grad, np.add.reduce(out, axis=dim, keepdims=True), out=out), out=out)


def gelu_derivative_values(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    """d/dx gelu(x) (Phi(x) + x * phi(x), or the tanh form's derivative) in float32: torch's own
    gelu backward for a unit gradient, one vectorised pass (2.5x faster than the formula in
    torch ops)."""
    torch = torch_module()
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    return torch.ops.aten.gelu_backward(_ones(torch, t), t, approximate=approximate).numpy()


_ones_kept = None


def _ones(torch, like):
    """torch.ones_like(like) for a contiguous float32 `like`, the last one made kept for the next call
    of that shape (gelu_backward only reads it; a training step asks for the same shape each time)."""
    global _ones_kept
    ones = _ones_kept
    if ones is None or ones.shape != like.shape:
        ones = _ones_kept = torch.ones_like(like)
    return ones


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
    epsilon = float(attrs.get("epsilon", 1e-5))
    out = _kept_gradient(inputs, dim, epsilon, operand)
    if out is None:
        shape = a.shape or (1,)
        pair = (0, 1) if operand in (0, 1) else (operand,)
        with ignored():
            outs = layernorm_gradients(grad.logical().reshape(shape), a.logical().reshape(shape),
                                       gamma.logical().reshape(gamma.shape), dim, epsilon, pair)
        if len(pair) == 2:
            entries = _kept_entries()
            entries.append((tuple(inputs), dim, epsilon, 1 - operand, outs[1 - operand]))
            del entries[:-KEPT_PAIRS]
        out = outs[operand]
    return result(out.reshape(a.shape if operand == 0 else gamma.shape), numerics)


# A layer norm's input and weight gradients share their statistics and one torch backward call
# (a training graph asks for both): the first LayernormBw of such a pair computes both and keeps
# the other here, for a later call in this thread on the very same tensor objects (device tensors
# are never written in place), which takes it out. The pair's calls need not be adjacent (a
# training step asks for a first layer norm's dx in one backward program and its dgamma in the
# next, 130 kernel calls later), so the last KEPT_PAIRS entries are kept; an entry whose partner
# never comes holds its tensors until KEPT_PAIRS newer pairs push it out.
KEPT_PAIRS = 4
_kept = threading.local()


def _kept_entries() -> list:
    entries = getattr(_kept, "entries", None)
    if entries is None:
        entries = _kept.entries = []
    return entries


def _kept_gradient(inputs, dim: int, epsilon: float, operand: int):
    """The float32 gradient an earlier call kept for this call (taken out of the kept entries), or None."""
    entries = getattr(_kept, "entries", None)
    if not entries:
        return None
    for k, (tensors, kept_dim, kept_epsilon, kept_operand, values) in enumerate(entries):
        if (len(tensors) == len(inputs) and all(x is y for x, y in zip(tensors, inputs))
                and (kept_dim, kept_epsilon, kept_operand) == (dim, epsilon, operand)):
            del entries[k]
            return values
    return None


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
