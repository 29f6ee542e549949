"""PadsPerAxis: a pad of more axes than the device's Pad takes, as one pad per axis.

The device pads the last two dims (or H and W of NHWC). Constant, reflect and replicate padding
are separable (numpy's pad goes axis by axis too), so ZeroPad3d / ConstantPad3d / ONNX Pad of the
depth or batch axes become: one pad of the last two dims, then for each other padded axis a pad of
the middle dim of a (before, axis, after) 3-D reshape. Static shapes only.
"""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from .call_rewrites import rewrite_calls
from .scalars import static_shape


def pad_axis(x: relax.Expr, shape: list[int], axis: int, before: int, after: int, mode: str = "constant",
             value: float = 0.0) -> tuple[relax.Expr, list[int]]:
    """x padded along one axis, as a device pad of the second-to-last dim of a 3-D view."""
    if not before and not after:
        return x, shape
    outer, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1:]))
    view = relax.op.reshape(x, (outer, shape[axis], inner))
    padded = relax.op.nn.pad(view, (0, 0, before, after, 0, 0), pad_mode=mode, pad_value=value)
    new_shape = [*shape[:axis], shape[axis] + before + after, *shape[axis + 1:]]
    return relax.op.reshape(padded, new_shape), new_shape


def _split_pad(call: relax.Call) -> relax.Expr | None:
    shape = static_shape(call.args[0])
    if shape is None or len(shape) < 3:
        return None
    widths = [int(v) for v in call.attrs.pad_width]
    ndim = len(shape)
    padded = [i for i in range(ndim) if widths[2 * i] or widths[2 * i + 1]]
    if len(padded) <= 1 or set(padded) <= {ndim - 2, ndim - 1}:
        return None  # the device's Pad takes it as it is
    mode, value = str(call.attrs.pad_mode), float(call.attrs.pad_value)
    x = call.args[0]
    last_two = [0] * (2 * ndim - 4) + widths[-4:]
    if any(widths[-4:]):
        x = relax.op.nn.pad(x, last_two, pad_mode=mode, pad_value=value)
        shape = shape[:-2] + [shape[-2] + sum(widths[-4:-2]), shape[-1] + sum(widths[-2:])]
    for axis in range(ndim - 2):
        x, shape = pad_axis(x, shape, axis, widths[2 * axis], widths[2 * axis + 1], mode, value)
    return x


@tvm.transform.module_pass(opt_level=0, name="PadsPerAxis")
class PadsPerAxis:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        return rewrite_calls(mod, {"relax.nn.pad": _split_pad})
