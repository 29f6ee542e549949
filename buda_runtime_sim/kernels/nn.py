"""Normalisation kernels: softmax, log-softmax and layernorm.

Along the last dimension they work on padded storage with the padded columns masked out (-inf
for softmax, excluded from mean and variance for layernorm); along any other dimension they
work on the logical values. Either way padding never enters the statistics.
"""

from __future__ import annotations

import math

import numpy as np

from ..float_errors import ignored
from ..tensor import Tensor, zero_padding
from .common import OpArgumentError, axis, result
from .registry import kernel


def _along_last_dim(a: Tensor, dim: int) -> bool:
    return a.ndim >= 2 and dim == a.ndim - 1


def _masked_rows(a: Tensor) -> np.ndarray:
    """Padded storage with padded columns set to -inf (they get zero probability)."""
    x = a.padded.copy()
    x[..., a.shape[-1]:] = -np.inf
    return x


def _log_softmax(x: np.ndarray, dim: int, stable: bool) -> np.ndarray:
    if stable:
        x = x - np.max(x, axis=dim, keepdims=True)
    return x - np.log(np.sum(np.exp(x), axis=dim, keepdims=True))


def _softmax(x: np.ndarray, dim: int, stable: bool) -> np.ndarray:
    """exp(x - max) / sum, each step into one new buffer (the same ufuncs as the plain formula)."""
    e = np.subtract(x, np.maximum.reduce(x, axis=dim, keepdims=True)) if stable else np.array(x, np.float32)
    np.exp(e, out=e)
    return np.divide(e, np.add.reduce(e, axis=dim, keepdims=True), out=e)


def _normalise(function):
    """Kernel for softmax-like ops: function(values, dim, stable) -> values."""

    def run(inputs, attrs, numerics):
        a = inputs[0]
        dim = axis(attrs["dim"], max(a.ndim, 1))
        stable = bool(attrs.get("stable", True))
        with ignored():
            if _along_last_dim(a, dim):
                # (without padded columns the storage goes in as it is: the functions write no input)
                x = _masked_rows(a) if a.padded.shape[-1] != a.shape[-1] else a.padded
                out = np.asarray(function(x, -1, stable), dtype=np.float32)
                return Tensor.from_padded(zero_padding(out, a.shape), a.shape, numerics.output_df)
            return result(function(a.logical().reshape(a.shape or (1,)), dim, stable).reshape(a.shape), numerics)

    return run


kernel("Softmax")(_normalise(_softmax))
kernel("LogSoftmax")(_normalise(_log_softmax))


@kernel("Layernorm")
def layernorm(inputs, attrs, numerics):
    """(x - mean) / sqrt(var + epsilon) * weights + bias, statistics along `dim`."""
    a, gamma, beta = inputs
    dim = axis(attrs.get("dim", -1), max(a.ndim, 1))
    eps = float(attrs.get("epsilon", 1e-5))
    size = a.shape[dim] if a.shape else 1
    for argument, t in (("weights", gamma), ("bias", beta)):
        if math.prod(t.shape) != size:
            raise OpArgumentError(argument, f"must hold {size} values (the size of dim {dim}), got shape {t.shape}")
    if not _along_last_dim(a, dim):
        x = a.logical().reshape(a.shape or (1,))
        mean = x.mean(axis=dim, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=dim, keepdims=True)
        along = [1] * x.ndim
        along[dim] = size
        out = (x - mean) / np.sqrt(var + eps) * gamma.logical().reshape(along) + beta.logical().reshape(along)
        return result(out.reshape(a.shape), numerics)
    cols = a.shape[-1]
    mean = a.padded.sum(axis=-1, keepdims=True) / cols  # padding adds zeros to the sum
    centred = a.padded - mean
    if cols != a.padded.shape[-1]:
        centred[..., cols:] = 0
    var = np.einsum("...i,...i->...", centred, centred)[..., None] / cols
    width = a.padded.shape[-1]
    # centred / sqrt(var + eps) * gamma + beta, in centred's buffer (the same ufuncs, all float32)
    out = np.divide(centred, np.sqrt(var + eps), out=centred)
    out = np.multiply(out, _row(gamma, width), out=out)
    out = np.add(out, _row(beta, width), out=out)
    return Tensor.from_padded(zero_padding(out, a.shape), a.shape, numerics.output_df)


def _row(t: Tensor, width: int) -> np.ndarray:
    """A per-column parameter (any shape holding C values) as a zero-padded row of `width`."""
    values = t.logical().reshape(-1)
    if values.size == width and values.dtype == np.float32:     # nothing to pad: the values as they are
        return values
    row = np.zeros(width, np.float32)
    row[: values.size] = values
    return row
