"""2-D max and average pooling over NCHW (or NHWC with channel_last) activations.

Computed on logical values, so tile padding never takes part. Explicit padding uses -inf for
max pooling and 0 for average pooling; ceil_mode's extra windows never count padding they
overhang (PyTorch's rule).
"""

from __future__ import annotations

import numpy as np

from .common import OpArgumentError, result
from .registry import kernel
from .window import Window, from_channel_first, make_window, pad_spatial, to_channel_first


def _prepare(inputs, attrs, dilation):
    """(values as (B, H, W), window, output size, padding incl. ceil-mode overhang, restore fn)."""
    channel_last = bool(attrs.get("channel_last", False))
    a = inputs[0]
    if a.ndim < 3:
        raise OpArgumentError("activations", f"must be at least 3-D (C, H, W), got shape {a.shape}")
    x = to_channel_first(a.logical(), channel_last)
    lead, (height, width) = x.shape[:-2], x.shape[-2:]
    window = make_window(attrs["kernel_size"], attrs.get("stride", 1), dilation, attrs.get("padding", "same"),
                         height, width)
    out_h, out_w = window.output_size(height, width, bool(attrs.get("ceil_mode", False)))
    ext_h, ext_w = window.extent
    left, right, top, bottom = window.pad
    overhang_h = max(0, (out_h - 1) * window.stride[0] + ext_h - (height + top + bottom))
    overhang_w = max(0, (out_w - 1) * window.stride[1] + ext_w - (width + left + right))

    def finish(out: np.ndarray) -> np.ndarray:
        return from_channel_first(out[..., :out_h, :out_w].reshape(lead + (out_h, out_w)), channel_last)

    return x.reshape((-1, height, width)), window, (overhang_w, overhang_h), finish


def _torch_pool(fn, x: np.ndarray, window: Window, **kwargs) -> np.ndarray:
    import torch

    tensor = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    return fn(tensor, kernel_size=window.kernel, stride=window.stride, padding=0, **kwargs).numpy()


@kernel("MaxPool2d")
def max_pool2d(inputs, attrs, numerics):
    import torch

    x, window, (over_w, over_h), finish = _prepare(inputs, attrs, attrs.get("dilation", 1))
    left, right, top, bottom = window.pad
    padded = pad_spatial(x, (left, right + over_w, top, bottom + over_h), -np.inf)
    out = _torch_pool(torch.nn.functional.max_pool2d, padded, window, dilation=window.dilation)
    return result(finish(out), numerics)


@kernel("AvgPool2d")
def avg_pool2d(inputs, attrs, numerics):
    import torch

    x, window, (over_w, over_h), finish = _prepare(inputs, attrs, 1)
    left, right, top, bottom = window.pad
    overhung = (left, right + over_w, top, bottom + over_h)

    def window_sums(values):
        return _torch_pool(torch.nn.functional.avg_pool2d, values, window, divisor_override=1)

    sums = window_sums(pad_spatial(x, overhung, 0.0))
    if attrs.get("divisor_override") is not None:
        count = np.float32(attrs["divisor_override"])
    else:
        counted = np.ones((1,) + x.shape[-2:], np.float32)
        if attrs.get("count_include_pad", True):
            counted = pad_spatial(counted, window.pad, 1.0)
            counted = pad_spatial(counted, (0, over_w, 0, over_h), 0.0)
        else:
            counted = pad_spatial(counted, overhung, 0.0)
        count = window_sums(counted)
    return result(finish(sums / count), numerics)
