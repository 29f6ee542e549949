"""Sliding-window geometry shared by convolutions and pooling: padding, output size, layout.

Explicit padding is (left, right, top, bottom), PyBuda's order. "same" follows TensorFlow
(output = ceil(input / stride), the extra pixel on the right/bottom); "valid" is no padding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .common import OpArgumentError


@dataclass(frozen=True)
class Window:
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int, int, int]  # left, right, top, bottom

    @property
    def extent(self) -> tuple[int, int]:
        """Kernel size once dilated."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilation))

    @property
    def before(self) -> tuple[int, int]:
        """Padding before the data along (H, W): top, left."""
        return self.pad[2], self.pad[0]

    @property
    def after(self) -> tuple[int, int]:
        """Padding after the data along (H, W): bottom, right."""
        return self.pad[3], self.pad[1]

    def output_size(self, height: int, width: int, ceil_mode: bool = False) -> tuple[int, int]:
        """PyTorch's pooling output size: with ceil_mode a window may overhang the padded input, even
        one larger than all of it (EfficientNet's pooler: a 320x320 kernel over a 2x2 map gives one
        output), as long as it starts inside the input or its leading padding."""
        sizes = []
        for size, before, after, extent, stride in zip((height, width), self.before, self.after, self.extent,
                                                       self.stride):
            span = size + before + after - extent
            out = -(-span // stride) + 1 if ceil_mode else span // stride + 1
            if ceil_mode and (out - 1) * stride >= size + before:  # last window must start inside
                out -= 1
            if out < 1:
                raise OpArgumentError("kernel_size", f"{self.kernel} (dilated {self.extent}) is larger than the "
                                                     f"padded input {height}x{width}"
                                                     + ("" if ceil_mode else " (without ceil_mode)"))
            sizes.append(out)
        return tuple(sizes)


def pair(value, argument: str) -> tuple[int, int]:
    values = (value, value) if np.isscalar(value) else tuple(value)
    if len(values) != 2:
        raise OpArgumentError(argument, f"must be an int or a pair of ints, got {value!r}")
    return int(values[0]), int(values[1])


def make_window(kernel, stride, dilation, padding, height: int, width: int) -> Window:
    """Resolve padding given as an int, "same", "valid" or (left, right, top, bottom)."""
    kernel, stride, dilation = pair(kernel, "kernel_size"), pair(stride, "stride"), pair(dilation, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        else:
            extent = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
            (top, bottom), (left, right) = (_same(size, e, s) for size, e, s in zip((height, width), extent, stride))
            pads = (left, right, top, bottom)
    elif np.isscalar(padding):
        pads = (int(padding),) * 4
    else:
        pads = tuple(int(p) for p in padding)
    return Window(kernel, stride, dilation, pads)


def _same(size: int, extent: int, stride: int) -> tuple[int, int]:
    total = max((-(-size // stride) - 1) * stride + extent - size, 0)
    return total // 2, total - total // 2


def to_channel_first(x: np.ndarray, channel_last: bool) -> np.ndarray:
    """NHWC -> NCHW when channel_last; NCHW is what the window kernels compute in."""
    return np.moveaxis(x, -1, -3) if channel_last else x


def from_channel_first(x: np.ndarray, channel_last: bool) -> np.ndarray:
    return np.moveaxis(x, -3, -1) if channel_last else x


def pad_spatial(x: np.ndarray, pads, value: float) -> np.ndarray:
    """Pad an NCHW array's H and W by (left, right, top, bottom); negative values crop."""
    left, right, top, bottom = pads
    if min(pads) < 0:
        h, w = x.shape[-2:]
        x = x[..., max(-top, 0): h - max(-bottom, 0), max(-left, 0): w - max(-right, 0)]
        left, right, top, bottom = (max(p, 0) for p in pads)
    if left == right == top == bottom == 0:
        return x
    widths = [(0, 0)] * (x.ndim - 2) + [(top, bottom), (left, right)]
    return np.pad(x, widths, constant_values=value)
