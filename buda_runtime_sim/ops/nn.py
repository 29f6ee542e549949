"""Normalisation kernels: softmax and layernorm, masked so padding never enters the statistics."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, pad, zero_padding
from .registry import kernel


def _last_dim(dim: int, ndim: int) -> bool:
    return dim % max(ndim, 1) == max(ndim, 1) - 1


def _softmax(x: np.ndarray, axis: int, stable: bool) -> np.ndarray:
    if stable:
        x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


@kernel("Softmax")
def softmax(inputs, attrs, numerics):
    a = inputs[0]
    dim, stable = int(attrs["dim"]), bool(attrs.get("stable", True))
    if _last_dim(dim, a.ndim) and a.ndim >= 2:
        cols = a.shape[-1]
        x = a.padded.copy()
        x[..., cols:] = -np.inf  # padded columns get zero probability
        out = zero_padding(_softmax(x, -1, stable).astype(np.float32), a.shape)
    else:
        out = pad(_softmax(a.logical(), dim, stable))
    return Tensor.from_padded(out, a.shape, numerics.output_df)


@kernel("Layernorm")
def layernorm(inputs, attrs, numerics):
    a, gamma, beta = inputs
    dim, eps = int(attrs.get("dim", -1)), float(attrs.get("epsilon", 1e-5))
    if not _last_dim(dim, a.ndim) or a.ndim < 2:
        x = a.logical()
        mean = x.mean(axis=dim, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=dim, keepdims=True)
        out = pad((x - mean) / np.sqrt(var + eps) * gamma.logical() + beta.logical())
        return Tensor.from_padded(out, a.shape, numerics.output_df)
    cols = a.shape[-1]
    mean = a.padded.sum(axis=-1, keepdims=True) / cols  # padding adds zeros to the sum
    centred = a.padded - mean
    centred[..., cols:] = 0
    var = np.einsum("...i,...i->...", centred, centred)[..., None] / cols
    out = centred / np.sqrt(var + eps)
    out = out * _row(gamma) + _row(beta)
    return Tensor.from_padded(zero_padding(out.astype(np.float32), a.shape), a.shape, numerics.output_df)


def _row(t: Tensor) -> np.ndarray:
    """A 1-D parameter as a padded row vector that broadcasts across the last dim."""
    return t.padded[0] if t.ndim == 1 else t.padded
