"""ThreeDAs2D: 3-D convolution and pooling as the device's 2-D ops (as PyBuda lowered them).

conv3d: the kernel's depth taps are separate 2-D convolutions. For tap k, the input depths
k*dilation + i*stride (i over the output depths) are sliced, folded into the batch (N*Do images),
convolved with the kernel's slice k over H and W, and the kd results are added; depth padding is a
zero pad of the depth axis first (a device Pad over (N, C, D, H*W)).
max/avg_pool3d: the window is a box, so the pool is separable: a 2-D pool over (H, W) of the input
as (N, C*D, H, W), then a (kd, 1) pool over (D, Ho*Wo). Max of maxes is the max; for the average,
the divisor (with or without padding counted, ceil mode too) is a product of per-axis counts.
adaptive_avg_pool3d: to 1x1x1 a mean; to sizes that divide the input, avg_pool3d with kernel =
stride = input / output, then as above. Only NCDHW / OIDHW with static shapes is rewritten.
"""

from __future__ import annotations

import tvm
from tvm import relax

from .call_rewrites import ints, out_dtype, rewrite_calls
from .pads_per_axis import pad_axis
from .scalars import static_shape


def _conv3d(call: relax.Call) -> relax.Expr | None:
    a = call.attrs
    if (str(a.data_layout), str(a.kernel_layout), str(a.out_layout)) != ("NCDHW", "OIDHW", "NCDHW"):
        return None
    x, w = call.args
    x_shape, w_shape, out_shape = static_shape(x), static_shape(w), static_shape(call)
    if None in (x_shape, w_shape, out_shape):
        return None
    n, c, _, h, width = x_shape
    o, c_per_group, kd, kh, kw = w_shape
    _, _, d_out, h_out, w_out = out_shape
    sd, sh, sw = ints(a.strides)
    dd, dh, dw = ints(a.dilation)
    front, top, left, back, bottom, right = ints(a.padding)
    x, _ = pad_axis(x, x_shape, 2, front, back)
    total = None
    for k in range(kd):
        start = k * dd
        taps = relax.op.strided_slice(x, [2], [start], [start + (d_out - 1) * sd + 1], [sd])
        images = relax.op.reshape(relax.op.permute_dims(taps, [0, 2, 1, 3, 4]), (n * d_out, c, h, width))
        kernel = relax.op.reshape(relax.op.strided_slice(w, [2], [k], [k + 1]), (o, c_per_group, kh, kw))
        out = relax.op.nn.conv2d(images, kernel, strides=(sh, sw), padding=(top, left, bottom, right),
                                 dilation=(dh, dw), groups=int(a.groups), out_dtype=out_dtype(a.out_dtype))
        total = out if total is None else relax.op.add(total, out)
    total = relax.op.reshape(total, (n, d_out, o, h_out, w_out))
    return relax.op.permute_dims(total, [0, 2, 1, 3, 4])


def _pool3d(make_2d):
    def rewrite(call: relax.Call) -> relax.Expr | None:
        a = call.attrs
        if str(a.layout) != "NCDHW" or str(a.out_layout) != "NCDHW":
            return None
        return _separable_pool(make_2d, call.args[0], static_shape(call), ints(a.pool_size), ints(a.strides),
                               ints(a.padding), ints(a.dilation), bool(a.ceil_mode), bool(a.count_include_pad))

    return rewrite


def _separable_pool(make_2d, x, out_shape, size, strides, padding, dilation, ceil_mode, count_include_pad):
    x_shape = static_shape(x)
    if x_shape is None or out_shape is None:
        return None
    n, c, d, h, w = x_shape
    d_out, h_out, w_out = out_shape[2:]
    front, top, left, back, bottom, right = padding
    common = {"ceil_mode": ceil_mode, "count_include_pad": count_include_pad}
    plane = make_2d(relax.op.reshape(x, (n, c * d, h, w)), pool_size=size[1:], strides=strides[1:],
                    padding=(top, left, bottom, right), dilation=dilation[1:], **common)
    depth = make_2d(relax.op.reshape(plane, (n, c, d, h_out * w_out)), pool_size=(size[0], 1),
                    strides=(strides[0], 1), padding=(front, 0, back, 0), dilation=(dilation[0], 1), **common)
    return relax.op.reshape(depth, (n, c, d_out, h_out, w_out))


def _adaptive_avg_pool3d(call: relax.Call) -> relax.Expr | None:
    a = call.attrs
    x = call.args[0]
    x_shape, out_shape = static_shape(x), static_shape(call)
    if str(a.layout) != "NCDHW" or str(a.out_layout) != "NCDHW" or x_shape is None or out_shape is None:
        return None
    if out_shape[2:] == [1, 1, 1]:
        return relax.op.mean(x, axis=[2, 3, 4], keepdims=True)
    if any(i % o for i, o in zip(x_shape[2:], out_shape[2:])):
        return None
    window = [i // o for i, o in zip(x_shape[2:], out_shape[2:])]
    return _separable_pool(relax.op.nn.avg_pool2d, x, out_shape, window, window, [0] * 6, [1, 1, 1], False, True)


_REWRITES = {
    "relax.nn.conv3d": _conv3d,
    "relax.nn.max_pool3d": _pool3d(relax.op.nn.max_pool2d),
    "relax.nn.avg_pool3d": _pool3d(relax.op.nn.avg_pool2d),
    "relax.nn.adaptive_avg_pool3d": _adaptive_avg_pool3d,
}


@tvm.transform.module_pass(opt_level=0, name="ThreeDAs2D")
class ThreeDAs2D:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        return rewrite_calls(mod, _REWRITES)
