"""Convolutions as the device runs them: im2col, then a matmul through the fidelity model.

Activations are NCHW (NHWC with channel_last); weights are (Cout, Cin/groups, kH, kW) for
Conv2d and (Cin, Cout/groups, kH, kW) for Conv2dTranspose (PyTorch's layouts). A transposed
convolution is the ordinary convolution of the stride-dilated input with the flipped kernel.
"""

from __future__ import annotations

import numpy as np

from .common import OpArgumentError, result
from .matmul import matmul_with_fidelity
from .registry import kernel
from .window import Window, from_channel_first, make_window, pad_spatial, pair, to_channel_first


def convolve(x: np.ndarray, weights: np.ndarray, window: Window, groups: int, numerics) -> np.ndarray:
    """NCHW x (N, C, H, W) conv weights (Cout, C/groups, kH, kW) -> (N, Cout, oH, oW)."""
    import torch

    n, channels, height, width = x.shape
    out_channels = weights.shape[0]
    out_h, out_w = window.output_size(height, width)
    padded = np.ascontiguousarray(pad_spatial(x, window.pad, 0.0), dtype=np.float32)
    columns = torch.nn.functional.unfold(
        torch.from_numpy(padded), kernel_size=window.kernel, dilation=window.dilation, stride=window.stride
    ).numpy()  # (N, C*kH*kW, L), channel-major like the weights
    depth = channels // groups * window.kernel[0] * window.kernel[1]
    columns = columns.reshape(n, groups, depth, out_h * out_w).transpose(0, 1, 3, 2)  # (N, G, L, K)
    matrix = weights.reshape(groups, out_channels // groups, depth).transpose(0, 2, 1)  # (G, K, Cout/G)
    product = matmul_with_fidelity(columns, np.broadcast_to(matrix, (n,) + matrix.shape), numerics)
    return product.transpose(0, 1, 3, 2).reshape(n, out_channels, out_h, out_w)


def _operands(inputs, attrs, op: str):
    """Activations as NCHW float32 (batch added when 3-D), weights, bias, and how to restore the layout."""
    channel_last = bool(attrs.get("channel_last", False))
    x = inputs[0].logical()
    if x.ndim not in (3, 4):
        raise OpArgumentError("activations", f"must be 3-D or 4-D, got shape {inputs[0].shape}")
    batched = x.ndim == 4
    x = to_channel_first(x if batched else x[None], channel_last)
    weights = inputs[1].logical()
    if weights.ndim != 4:
        raise OpArgumentError("weights", f"must be 4-D ({op} kernel), got shape {inputs[1].shape}")
    bias = inputs[2].logical().reshape(-1) if len(inputs) > 2 else None

    def finish(out: np.ndarray) -> np.ndarray:
        if bias is not None:
            if bias.size != out.shape[1]:
                raise OpArgumentError("bias", f"must hold {out.shape[1]} values (one per output channel), "
                                              f"got shape {inputs[2].shape}")
            out = out + bias.reshape(1, -1, 1, 1)
        out = from_channel_first(out, channel_last)
        return out if batched else out[0]

    return x, weights, finish


@kernel("Conv2d")
def conv2d(inputs, attrs, numerics):
    x, weights, finish = _operands(inputs, attrs, "Conv2d")
    groups = int(attrs.get("groups", 1))
    channels = x.shape[1]
    if channels % groups or weights.shape[0] % groups or weights.shape[1] * groups != channels:
        raise OpArgumentError("weights", f"of shape {inputs[1].shape} do not fit {channels} input channels "
                                         f"in {groups} group(s)")
    window = make_window(weights.shape[2:], attrs.get("stride", 1), attrs.get("dilation", 1),
                         attrs.get("padding", "same"), *x.shape[2:])
    return result(finish(convolve(x, weights, window, groups, numerics)), numerics)


@kernel("Conv2dTranspose")
def conv2d_transpose(inputs, attrs, numerics):
    x, weights, finish = _operands(inputs, attrs, "Conv2dTranspose")
    groups = int(attrs.get("groups", 1))
    n, channels, height, width = x.shape
    if weights.shape[0] != channels or channels % groups:
        raise OpArgumentError("weights", f"of shape {inputs[1].shape} do not fit {channels} input channels "
                                         f"in {groups} group(s)")
    kernel_hw = weights.shape[2:]
    stride, dilation = pair(attrs.get("stride", 1), "stride"), pair(attrs.get("dilation", 1), "dilation")
    extra_h, extra_w = pair(attrs.get("output_padding", 0), "output_padding")
    left, right, top, bottom = _transposed_padding(attrs.get("padding", "same"), kernel_hw, stride, dilation)
    # Spread the input out by the stride, then pad so a stride-1 convolution yields every output.
    spread = np.zeros((n, channels, (height - 1) * stride[0] + 1, (width - 1) * stride[1] + 1), np.float32)
    spread[:, :, :: stride[0], :: stride[1]] = x
    ext_h, ext_w = (d * (k - 1) for k, d in zip(kernel_hw, dilation))
    window = Window(tuple(kernel_hw), (1, 1), dilation,
                    (ext_w - left, ext_w - right + extra_w, ext_h - top, ext_h - bottom + extra_h))
    per_group = weights.reshape((groups, channels // groups) + weights.shape[1:])
    flipped = np.flip(per_group.swapaxes(1, 2), axis=(-2, -1))  # (G, Cout/G, Cin/G, kH, kW)
    conv_weights = np.ascontiguousarray(flipped).reshape((-1, channels // groups) + tuple(kernel_hw))
    return result(finish(convolve(spread, conv_weights, window, groups, numerics)), numerics)


def _transposed_padding(padding, kernel_hw, stride, dilation) -> tuple[int, int, int, int]:
    """(left, right, top, bottom); "same" gives output = input * stride (TensorFlow's rule)."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        (top, bottom), (left, right) = (
            (total // 2, total - total // 2)
            for total in (max(d * (k - 1) + 1 - s, 0) for k, s, d in zip(kernel_hw, stride, dilation))
        )
        return left, right, top, bottom
    if np.isscalar(padding):
        return (int(padding),) * 4
    return tuple(int(p) for p in padding)
