"""DecomposeNorms: instance and group normalisation as reductions and elementwise ops.

The device has Layernorm over one axis but no instance or group norm; like PyBuda, both become
mean, subtract, square, mean, add epsilon, rsqrt, multiply (then the affine scale and shift along
the channel axis). Group norm normalises (N, G, C/G * spatial) over its last axis. `tile` (PyTorch
repeats InstanceNorm's affine weights per batch item) becomes a concatenation of copies.
Later passes split multi-axis means and decompose rsqrt. Static shapes only.
"""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from .call_rewrites import rewrite_calls
from .scalars import static_shape


def _normalise(x: relax.Expr, axes: list[int], epsilon: float, dtype: str) -> relax.Expr:
    centred = relax.op.subtract(x, relax.op.mean(x, axis=axes, keepdims=True))
    variance = relax.op.mean(relax.op.multiply(centred, centred), axis=axes, keepdims=True)
    return relax.op.multiply(centred, relax.op.rsqrt(relax.op.add(variance, relax.const(epsilon, dtype))))


def _affine(y: relax.Expr, gamma, beta, attrs, ndim: int, channel_axis: int, channels: int) -> relax.Expr:
    shape = [1] * ndim
    shape[channel_axis] = channels
    if bool(attrs.scale):
        y = relax.op.multiply(y, relax.op.reshape(gamma, shape))
    if bool(attrs.center):
        y = relax.op.add(y, relax.op.reshape(beta, shape))
    return y


def _instance_norm(call: relax.Call) -> relax.Expr | None:
    x, gamma, beta = call.args
    shape = static_shape(x)
    if shape is None:
        return None
    a = call.attrs
    ndim, channel_axis = len(shape), int(a.channel_axis) % len(shape)
    axes = [int(v) % ndim for v in a.axes]
    y = _normalise(x, axes, float(a.epsilon), str(x.ty.dtype))
    return _affine(y, gamma, beta, a, ndim, channel_axis, shape[channel_axis])


def _group_norm(call: relax.Call) -> relax.Expr | None:
    x, gamma, beta = call.args
    shape = static_shape(x)
    a = call.attrs
    if shape is None or len(shape) < 2 or int(a.channel_axis) % len(shape) != 1:
        return None
    if sorted(int(v) % len(shape) for v in a.axes) != list(range(2, len(shape))):
        return None
    groups = int(a.num_groups)
    grouped = relax.op.reshape(x, (shape[0], groups, int(np.prod(shape[1:])) // groups))
    y = relax.op.reshape(_normalise(grouped, [2], float(a.epsilon), str(x.ty.dtype)), shape)
    return _affine(y, gamma, beta, a, len(shape), 1, shape[1])


def _tile(call: relax.Call) -> relax.Expr | None:
    x = call.args[0]
    shape, out_shape = static_shape(x), static_shape(call)
    if shape is None or out_shape is None:
        return None
    repeats = [int(r) for r in call.attrs.repeats]
    ndim = max(len(shape), len(repeats))
    repeats = [1] * (ndim - len(repeats)) + repeats
    if len(shape) < ndim:
        x = relax.op.reshape(x, [1] * (ndim - len(shape)) + shape)
    for axis, r in enumerate(repeats):
        if r > 1:
            x = relax.op.concat([x] * r, axis=axis)
    return x


_REWRITES = {"relax.nn.instance_norm": _instance_norm, "relax.nn.group_norm": _group_norm, "relax.tile": _tile}


@tvm.transform.module_pass(opt_level=0, name="DecomposeNorms")
class DecomposeNorms:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        return rewrite_calls(mod, _REWRITES)
