"""ReconstructLayerNorm: layer normalisation written out elementwise -> one nn.layer_norm.

Two shapes reach us. PyTorch and ONNX normalise, then scale and shift:

    d = x - mean(x);  (d / sqrt(mean(d ** 2) + eps)) * gamma + beta

TFLite (Keras LayerNormalization) folds the normalisation into one multiply and one shift:

    s = rsqrt(mean((x - mean(x)) ** 2) + eps) * gamma;  x * s + (beta - mean(x) * s)

Squares may be written d ** 2, d * d or square(d); 1 / sqrt as rsqrt or a division; gamma and beta
may be absent. Both means must reduce the same single axis with keepdims.
"""

import numpy as np
from tvm import relax
from tvm.relax.dpl import is_const, is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import ScalarSlots, dtype_of, scalar_value, static_shape


def _mul(a, b):
    return is_op("relax.multiply")(a, b)


def _add(a, b):
    return is_op("relax.add")(a, b)


@function_pass(opt_level=0, name="ReconstructLayerNorm")
class ReconstructLayerNorm:
    def __init__(self):
        c = self.scalars = ScalarSlots()
        self.x, self.gamma, self.beta, self.eps = wildcard(), wildcard(), wildcard(), is_const()
        self.mean = is_op("relax.mean")(self.x)
        centred = is_op("relax.subtract")(self.x, self.mean)
        squared = is_op("relax.power")(centred, c(2.0)) | _mul(centred, centred) | is_op("relax.square")(centred)
        self.var = is_op("relax.mean")(squared)
        var_eps = _add(self.var, self.eps)
        sqrt = is_op("relax.sqrt")(var_eps)
        inv_std = is_op("relax.rsqrt")(var_eps) | is_op("relax.divide")(c(1.0), sqrt)
        normed = is_op("relax.divide")(centred, sqrt) | _mul(centred, inv_std)
        scaled = _mul(normed, self.gamma)
        scale = _mul(inv_std, self.gamma) | inv_std
        shift = _mul(is_op("relax.negative")(self.mean), scale)
        folded = _add(_mul(self.x, scale),
                      _add(shift, self.beta) | is_op("relax.subtract")(self.beta, _mul(self.mean, scale)) | shift)
        # Most complete forms first: a bare `normed` also sits inside every affine form.
        self.patterns = [_add(scaled, self.beta), folded, scaled, normed]

    def transform_function(self, func, mod, ctx):
        for pattern in self.patterns:
            func = rewrite_call(pattern, self.rewrite, func)
        return func

    def rewrite(self, expr, matches):
        x, mean, var = matches[self.x], matches[self.mean], matches[self.var]
        shape, eps = static_shape(x), scalar_value(matches[self.eps])
        if shape is None or eps is None or not self.scalars.hold(matches) or dtype_of(x) not in ("float32", "float16"):
            return expr
        axes = [_single_axis(m, len(shape)) for m in (mean, var)]
        if axes[0] is None or axes[0] != axes[1]:
            return expr
        axis = axes[0]
        gamma = _per_axis(matches.get(self.gamma), shape, axis, 1.0, dtype_of(x))
        beta = _per_axis(matches.get(self.beta), shape, axis, 0.0, dtype_of(x))
        if gamma is None or beta is None:
            return expr
        return relax.op.nn.layer_norm(x, gamma, beta, axes=[axis - len(shape)], epsilon=eps)


def _single_axis(mean: relax.Call, ndim: int) -> int | None:
    axes = mean.attrs.axis
    if axes is None or len(axes) != 1 or not mean.attrs.keepdims:
        return None
    return int(axes[0]) % ndim


def _per_axis(value, shape, axis, default, dtype):
    """gamma or beta as a 1-D tensor along `axis`: reshaped if it broadcasts along that axis only,
    a constant `default` when absent, None when it does not fit layer_norm."""
    size = shape[axis]
    if value is None:
        return relax.const(np.full(size, default, dtype), dtype)
    vshape = static_shape(value)
    if vshape is None or len(vshape) > len(shape):
        return None
    aligned = [1] * (len(shape) - len(vshape)) + vshape
    if any(d != 1 and not (i == axis and d == size) for i, d in enumerate(aligned)) or aligned[axis] != size:
        return None
    return value if vshape == [size] else relax.op.reshape(value, [size])
