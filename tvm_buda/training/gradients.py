"""Gradients TVM 0.27 does not register for ops our op table puts on the device (and for the
elementwise forms importers emit before our passes rewrite them).

Each rule is written in Relax ops the device has (erf, exp, where, mean, ...), so the backward
graph stays on the device. Layer norm, softmax and gelu use the device's own backward ops
instead (`tvm_buda.grad_ops`: LayernormBw, SoftmaxBw, GeluDerivative): one op and one rounding
where the elementwise chain took 4-24 of each. Registered at import with `register_gradient`, at
a level above TVM's own (which only softmax has).
"""

from __future__ import annotations

import math

from tvm import relax
from tvm.relax.op import register_gradient
from tvm.relax.op.grad import no_grad

from .. import grad_ops

_LEVEL = 11


def _const(value: float, like) -> relax.Constant:
    return relax.const(value, str(like.ty.dtype))


def _register(op_name: str):
    def wrap(fn):
        register_gradient(op_name, fn, level=_LEVEL)
        return fn

    return wrap


def _shape(expr):
    return expr.ty.shape


@_register("relax.nn.gelu")
def _gelu_grad(orig_var, orig_call, output_grad, ctx):
    """dy * gelu'(x): the backend's gelu_derivative, then one multiply (as PyBuda does)."""
    return [output_grad * grad_ops.gelu_derivative(orig_call.args[0])]


@_register("relax.nn.gelu_tanh")
def _gelu_tanh_grad(orig_var, orig_call, output_grad, ctx):
    return [output_grad * grad_ops.gelu_derivative(orig_call.args[0], "tanh")]


@_register("relax.nn.softmax")
def _softmax_grad(orig_var, orig_call, output_grad, ctx):
    """y * (dy - sum(dy * y)) in one SoftmaxBw (TVM's own rule is four ops)."""
    return [grad_ops.softmax_bw(orig_var, output_grad, int(orig_call.attrs.axis))]


@_register("relax.nn.leakyrelu")
def _leakyrelu_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    alpha = float(orig_call.attrs.alpha)
    return [relax.op.where(relax.op.less(x, _const(0.0, x)), output_grad * _const(alpha, x), output_grad)]


@_register("relax.erf")
def _erf_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    return [output_grad * relax.op.exp(x * x * _const(-1.0, x)) * _const(2 / math.sqrt(math.pi), x)]


@_register("relax.rsqrt")
def _rsqrt_grad(orig_var, orig_call, output_grad, ctx):
    y = orig_var
    return [output_grad * y * y * y * _const(-0.5, y)]


@_register("relax.square")
def _square_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    return [output_grad * x * _const(2.0, x)]


@_register("relax.clip")
def _clip_grad(orig_var, orig_call, output_grad, ctx):
    x, low, high = orig_call.args
    outside = relax.op.logical_or(relax.op.less(x, _const(float(low.value), x)),
                                  relax.op.greater(x, _const(float(high.value), x)))
    return [relax.op.where(outside, _const(0.0, x), output_grad), no_grad(low), no_grad(high)]


def _extreme_grad(orig_var, orig_call, output_grad, ctx):
    """max/min over axes: the gradient is shared equally by the elements equal to the extreme
    (torch.amax's rule)."""
    x = orig_call.args[0]
    axis, keepdims = orig_call.attrs.axis, bool(orig_call.attrs.keepdims)
    axes = list(range(len(_shape(x)))) if axis is None else [int(a) for a in axis]
    y, g = orig_var, output_grad
    if not keepdims:
        y, g = relax.op.expand_dims(y, axes), relax.op.expand_dims(g, axes)
    mask = relax.op.astype(relax.op.equal(x, y), str(x.ty.dtype))
    count = relax.op.sum(mask, axes, keepdims=True)
    return [mask * g / count]


register_gradient("relax.max", _extreme_grad, level=_LEVEL)
register_gradient("relax.min", _extreme_grad, level=_LEVEL)


@_register("relax.nn.layer_norm")
def _layer_norm_grad(orig_var, orig_call, output_grad, ctx):
    """dx, dgamma, dbeta: one LayernormBw each over a single axis; otherwise
    dx = rstd * (g*gamma - mean(g*gamma) - xhat * mean(g*gamma*xhat)) over the normalised axes."""
    x, gamma, beta = orig_call.args
    axes = [int(a) for a in orig_call.attrs.axes]
    eps = float(orig_call.attrs.epsilon)
    if len(axes) == 1:
        return [grad_ops.layernorm_bw(output_grad, x, gamma, axes[0], eps, operand) for operand in (0, 1, 2)]
    centred = x - relax.op.mean(x, axes, keepdims=True)
    variance = relax.op.mean(centred * centred, axes, keepdims=True)
    rstd = _const(1.0, x) / relax.op.sqrt(variance + _const(eps, x))
    xhat = centred * rstd
    dxhat = output_grad * gamma
    dx = rstd * (dxhat - relax.op.mean(dxhat, axes, keepdims=True)
                 - xhat * relax.op.mean(dxhat * xhat, axes, keepdims=True))
    dgamma = relax.op.collapse_sum_to(output_grad * xhat, _shape(gamma))
    dbeta = relax.op.collapse_sum_to(output_grad, _shape(beta))
    return [dx, dgamma, dbeta]


def _reshape_back(orig_var, orig_call, output_grad, ctx):
    return [relax.op.reshape(output_grad, _shape(orig_call.args[0]))]


register_gradient("relax.flatten", _reshape_back, level=_LEVEL)
register_gradient("relax.squeeze", _reshape_back, level=_LEVEL)


@_register("relax.strided_slice")
def _strided_slice_grad(orig_var, orig_call, output_grad, ctx):
    """Zeros around the slice, by concatenation along each sliced axis (unit strides)."""
    x = orig_call.args[0]
    axes, begins, ends = (list(orig_call.args[i]) for i in (1, 2, 3))
    strides = list(orig_call.args[4]) if len(orig_call.args) > 4 else [1] * len(axes)
    dims = [int(d) for d in _shape(x)]
    grad = output_grad
    for axis, begin, end, stride in zip(axes, begins, ends, strides):
        axis = int(axis) % len(dims)
        start, stop, step = slice(int(begin), int(end), int(stride)).indices(dims[axis])
        if step != 1:
            raise NotImplementedError("training: the gradient of a strided slice with stride != 1 is not supported")
        current = [int(d) for d in grad.ty.shape] if hasattr(grad, "ty") and grad.ty is not None else None
        current = current or [int(d) for d in ctx.normalize(grad).ty.shape]
        parts = []
        for width in (start, dims[axis] - max(stop, start)):
            shape = list(current)
            shape[axis] = width
            parts.append(relax.op.zeros(shape, str(x.ty.dtype)) if width else None)
        pieces = [p for p in (parts[0], grad, parts[1]) if p is not None]
        grad = ctx.normalize(relax.op.concat(pieces, axis) if len(pieces) > 1 else grad)
    return [grad] + [no_grad(a) for a in orig_call.args[1:]]


@_register("relax.nn.pad")
def _pad_grad(orig_var, orig_call, output_grad, ctx):
    """Constant padding: the gradient is the unpadded window of the output gradient."""
    if orig_call.attrs.pad_mode != "constant":
        raise NotImplementedError(f"training: the gradient of {orig_call.attrs.pad_mode} padding is not supported")
    x = orig_call.args[0]
    widths = [int(w) for w in orig_call.attrs.pad_width]
    dims = [int(d) for d in _shape(x)]
    axes = list(range(len(dims)))
    begin = [widths[2 * i] for i in axes]
    end = [widths[2 * i] + dims[i] for i in axes]
    return [relax.op.strided_slice(output_grad, axes, begin, end)] + [no_grad(a) for a in orig_call.args[1:]]


def _no_grads(orig_var, orig_call, output_grad, ctx):
    return [no_grad(a) for a in orig_call.args]


for _op in ("relax.logical_not", "relax.logical_and", "relax.logical_or", "relax.argmax"):
    register_gradient(_op, _no_grads, level=_LEVEL)


@_register("relax.nn.conv2d_transpose")
def _conv2d_transpose_grad(orig_var, orig_call, output_grad, ctx):
    """The adjoint of a transposed convolution is a convolution with the same weight (IOHW read as
    OIHW); the weight gradient is conv2d's, with the roles of input and output gradient swapped."""
    from tvm.relax.op._op_gradient import conv2d_grad

    a = orig_call.attrs
    if a.data_layout != "NCHW" or a.kernel_layout != "IOHW" or int(a.groups) != 1:
        raise NotImplementedError("training: the gradient of conv2d_transpose supports NCHW/IOHW, groups=1 only")
    x, w = orig_call.args
    as_conv = ctx.normalize(relax.op.nn.conv2d(output_grad, w, a.strides, a.padding, a.dilation, 1,
                                               "NCHW", "OIHW"))
    weight_grad = conv2d_grad(x, as_conv, x, ctx)[1]
    return [as_conv, weight_grad]


@_register("relax.take")
def _take_grad(orig_var, orig_call, output_grad, ctx):
    """An embedding's gradient scatter (take_backward, a host op). TVM lowers take_backward for 1-D
    indices only; batched ids (B, S) are flattened first."""
    from tvm.relax.op.grad import take_backward

    x, indices = orig_call.args
    axis = orig_call.attrs.axis
    axis = 0 if axis is None else int(axis) % len(_shape(x))
    index_dims = [int(d) for d in _shape(indices)]
    grad = output_grad
    if len(index_dims) != 1:
        count = 1
        for d in index_dims:
            count *= d
        dims = [int(d) for d in _shape(x)]
        indices = relax.op.reshape(indices, [count])
        grad = relax.op.reshape(output_grad, dims[:axis] + [count] + dims[axis + 1:])
    return [take_backward(grad, x, indices, axis), no_grad(orig_call.args[1])]


@_register("relax.matmul")
def _matmul_grad(orig_var, orig_call, output_grad, ctx):
    """A batched activation times a 2-D weight (every Linear on a sequence): the weight gradient
    is one matmul over the flattened batch, not a batched matmul summed afterwards."""
    from tvm.relax.op._op_gradient import matmul_grad

    a, b = orig_call.args
    a_dims, b_dims = [int(d) for d in _shape(a)], [int(d) for d in _shape(b)]
    if len(a_dims) < 3 or len(b_dims) != 2:
        return matmul_grad(orig_var, orig_call, output_grad, ctx)
    rows = 1
    for d in a_dims[:-1]:
        rows *= d
    flat_a = relax.op.reshape(a, [rows, a_dims[-1]])
    flat_g = relax.op.reshape(output_grad, [rows, b_dims[-1]])
    a_grad = relax.op.matmul(output_grad, relax.op.permute_dims(b, [1, 0]))
    b_grad = relax.op.matmul(relax.op.permute_dims(flat_a, [1, 0]), flat_g)
    return [a_grad, b_grad]
