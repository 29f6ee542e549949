"""Convolutions as the device runs them: windows of channels-last activations times the
[kH*kW*Cin/g, Cout] weight matrix (conv_weights.py), through the fidelity model.

Activations are NCHW (NHWC with channel_last). Weights are that matrix (with `kernel_size`), as a
parameter reaches the op, or a framework kernel: (Cout, Cin/groups, kH, kW) for Conv2d,
(Cin, Cout/groups, kH, kW) for Conv2dTranspose (PyTorch's layouts), converted on each call.

Arithmetic: torch's convolution runs once per fidelity phase term on the sliced operands
(activations are SrcB, weights SrcA, as in a matmul). Every partial product is exact in float32,
so the sum of those convolutions is the phase sum the matrix unit makes, the same re-association
`fidelity_matmul` uses for GEMMs; the sum is then rounded to the accumulation format. A transposed
convolution is the ordinary convolution of the stride-spread input with the flipped kernel.
"""

from __future__ import annotations

import functools

import numpy as np

from ..bf16_gemm import count_bf16_product
from ..dataformat import MathFidelity
from ..fidelity import accumulate, matmul_operand_slices, operand_fits_bf16, takes_bf16_route
from .common import OpArgumentError, result
from .conv_weights import matrix_as_kernel, weight_matrix
from .registry import kernel
from .window import Window, make_window, pair

def _weight_slices(weights, kernel_size, transposed: bool, groups: int, fidelity):
    """Torch (Cout, Cin/g, kH, kW) kernels of the weight's SrcA slices, one per phase term (None for
    a low slice the format makes zero); a read-only weight keeps them (Tensor.derived)."""
    import torch

    cache = weights.derived() if weights.ndim == 2 else None
    key = ("conv_kernels", MathFidelity.parse(fidelity))
    if cache is not None and key in cache:
        return cache[key]
    if weights.ndim == 2:
        matrix = weights.logical()
    else:
        matrix = weight_matrix(weights.logical(), transposed, groups)
        kernel_size = weights.shape[2:]
    slices = _Kernels(None if part is None else torch.from_numpy(np.ascontiguousarray(matrix_as_kernel(part, kernel_size)))
                      for part in matmul_operand_slices(matrix, "srca", fidelity, weights.data_format))
    slices.fit_bf16 = operand_fits_bf16(matrix, "srca", fidelity, weights.data_format)
    if cache is not None:
        cache[key] = slices
    return slices


def _activations(inputs, channel_last: bool):
    """Logical activations with a batch dim, whether it was added, and their (C, H, W)."""
    x = inputs[0].logical()
    if x.ndim not in (3, 4):
        raise OpArgumentError("activations", f"must be 3-D or 4-D, got shape {inputs[0].shape}")
    batched = x.ndim == 4
    x = x if batched else x[None]
    c, h, w = (x.shape[3], x.shape[1], x.shape[2]) if channel_last else x.shape[1:]
    return x, batched, (c, h, w)


def _kernel_size(inputs, attrs, op: str) -> tuple[int, int]:
    weights = inputs[1]
    if weights.ndim == 4:
        return tuple(weights.shape[2:])
    if weights.ndim == 2 and attrs.get("kernel_size") is not None:
        return pair(attrs["kernel_size"], "kernel_size")
    raise OpArgumentError("weights", f"must be a 4-D {op} kernel, or a 2-D [kH*kW*Cin/groups, Cout] matrix with "
                                     f"kernel_size given; got shape {weights.shape}")


def _check_shapes(inputs, channels: int, kernel_size, transposed: bool, groups: int) -> None:
    """The weights must fit the activations' channels in `groups`."""
    weights = inputs[1]
    if groups < 1 or channels % groups:
        ok = False
    elif weights.ndim == 2:
        rows, cout = weights.shape
        ok = rows == kernel_size[0] * kernel_size[1] * channels // groups and cout % groups == 0
    elif transposed:
        ok = weights.shape[0] == channels
    else:
        ok = weights.shape[1] * groups == channels and weights.shape[0] % groups == 0
    if not ok:
        held = (f" (the [kH*kW*Cin/groups, Cout] matrix of a {kernel_size[0]}x{kernel_size[1]} kernel)"
                if weights.ndim == 2 else "")
        raise OpArgumentError("weights", f"of shape {weights.shape}{held} do not fit {channels} input channels "
                                         f"in {groups} group(s)")


def _convolve(x: np.ndarray, x_format, kernels, window: Window, groups: int, channel_last: bool, numerics,
              spread: tuple[int, int] = (1, 1), bf16_route: bool = True) -> np.ndarray:
    """Sum over phase terms of conv2d(SrcB slice of x, SrcA slice of the weights), accumulated.
    Several terms (HiFi3) run as one convolution over the terms stacked along input channels.
    A bfloat16-route result that is not all finite is computed again on the float32 route, which
    defines it (oneDNN rounds a sum beyond bfloat16's range to inf; accumulate saturates it)."""
    import torch
    import torch.nn.functional as F

    x_parts = matmul_operand_slices(x, "srcb", numerics.math_fidelity, x_format)
    terms = [i for i, (a, b) in enumerate(zip(x_parts, kernels)) if a is not None and b is not None]
    t = torch.from_numpy(_stack_terms([x_parts[i] for i in terms], groups, channel_last))
    kernel = kernels[terms[0]] if len(terms) == 1 else _stacked_kernel(kernels, terms)
    # The bfloat16 route (bf16_gemm.py): same products, float32 sums, rounded to Float16_b by oneDNN.
    matrix = kernels[terms[0]][0].numel() * kernels[terms[0]].shape[0]       # [kH*kW*Cin/g, Cout]
    in_bf16 = (bf16_route and takes_bf16_route(numerics.accumulate_df, matrix, convolution=True)
               and getattr(kernels, "fit_bf16", False)
               and operand_fits_bf16(x, "srcb", numerics.math_fidelity, x_format))
    if in_bf16:
        t, kernel = t.to(torch.bfloat16), _bf16_kernel(kernels, tuple(terms), kernel)
    t = t.permute(0, 3, 1, 2) if channel_last else t
    if spread != (1, 1):
        n, c, h, w = t.shape
        spread_t = t.new_zeros((n, c, (h - 1) * spread[0] + 1, (w - 1) * spread[1] + 1))
        spread_t[:, :, :: spread[0], :: spread[1]] = t
        t = spread_t
    left, right, top, bottom = window.pad
    symmetric = left == right and top == bottom and min(window.pad) >= 0
    if not symmetric:
        t = F.pad(t, (left, right, top, bottom))
    padding = (top, left) if symmetric else (0, 0)
    packed = _packed_kernel(kernels, tuple(terms), kernel, t, window, padding, groups)
    if packed is not None:
        out = torch.ops.mkldnn._convolution_pointwise(t, packed, None, list(padding), list(window.stride),
                                                      list(window.dilation), groups, "none", [], "")
    else:
        out = F.conv2d(t, kernel, None, window.stride, padding, window.dilation, groups)
    out = out.permute(0, 2, 3, 1) if channel_last else out
    if in_bf16:
        out = out.float().numpy()                 # already rounded to the accumulation format
        if np.count_nonzero(np.isfinite(out)) == out.size:
            count_bf16_product()
            return out
        return _convolve(x, x_format, kernels, window, groups, channel_last, numerics, spread, bf16_route=False)
    return accumulate(out.numpy(), numerics.accumulate_df)


def _bf16_kernel(kernels, terms: tuple, kernel):
    """`kernel` in bfloat16 (exact: every slice fits), kept beside the weight's float32 slices."""
    import torch

    if not isinstance(kernels, _Kernels):
        return kernel.to(torch.bfloat16)
    key = ("bf16", terms)
    if key not in kernels.stacked:
        kernels.stacked[key] = kernel.to(torch.bfloat16)
    return kernels.stacked[key]


def _stack_terms(parts: list, groups: int, channel_last: bool) -> np.ndarray:
    """Activation slices side by side along channels, group by group: [g0 term0, g0 term1, g1 ...]."""
    if len(parts) == 1:
        return np.ascontiguousarray(parts[0])
    n, *spatial = parts[0].shape
    if channel_last:  # (N, H, W, C) -> (N, H, W, G, T, C/G)
        stacked = np.stack([p.reshape(p.shape[:-1] + (groups, -1)) for p in parts], axis=-2)
        return stacked.reshape(parts[0].shape[:-1] + (-1,))
    stacked = np.stack([p.reshape((n, groups, -1) + p.shape[2:]) for p in parts], axis=2)  # (N, G, T, C/G, H, W)
    return stacked.reshape((n, -1) + parts[0].shape[2:])


def _stacked_kernel(kernels: list, terms: list[int]):
    """The weights' slices for `terms` along input channels, kept beside the per-term kernels."""
    import torch

    key = tuple(terms)
    stacked = kernels.stacked.get(key) if isinstance(kernels, _Kernels) else None
    if stacked is None:
        stacked = torch.cat([kernels[i] for i in terms], dim=1)
        if isinstance(kernels, _Kernels):  # keep one copy: the per-term kernels become views of it
            kernels.stacked[key] = stacked
            width = stacked.shape[1] // len(terms)
            for j, i in enumerate(terms):
                kernels[i] = stacked[:, j * width:(j + 1) * width]
    return stacked


class _Kernels(list):
    """Per-term torch kernels of one weight, plus their stacked forms and their oneDNN-packed forms
    (built on first use)."""

    def __init__(self, parts):
        super().__init__(parts)
        self.stacked: dict = {}
        self.packed: dict = {}
        self.fit_bf16 = False


def _packed_kernel(kernels, terms: tuple, kernel, t, window: Window, padding, groups: int):
    """`kernel` reordered once into oneDNN's blocked layout for this input shape, kept beside the
    weight's slices; None where oneDNN is missing or the weight is not cached (a plain conv2d then).

    Why: torch's conv2d reorders a float32 kernel on every call, and on small images (ResNet's 7x7
    and 14x14 stages) that reorder costs more than the convolution itself (37 ms -> 9 ms for a
    3x3 1024->512 conv at 7x7). The products and the float32 sums are the same convolution's."""
    import torch

    if not isinstance(kernels, _Kernels) or not _onednn_available() or t.dtype not in (torch.float32, torch.bfloat16):
        return None
    key = (terms, t.dtype, tuple(t.shape), padding, tuple(window.stride), tuple(window.dilation), groups)
    packed = kernels.packed.get(key)
    if packed is None:
        packed = kernels.packed[key] = torch.ops.mkldnn._reorder_convolution_weight(
            kernel.contiguous(), list(padding), list(window.stride), list(window.dilation), groups,
            list(t.shape))
    return packed


@functools.cache
def _onednn_available() -> bool:
    import torch

    return (torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_convolution_pointwise")
            and hasattr(torch.ops.mkldnn, "_reorder_convolution_weight"))



def _finish(out: np.ndarray, inputs, batched: bool, channel_last: bool, numerics):
    if len(inputs) > 2:
        bias = inputs[2].logical().reshape(-1)
        channels = out.shape[-1] if channel_last else out.shape[1]
        if bias.size != channels:
            raise OpArgumentError("bias", f"must hold {channels} values (one per output channel), "
                                          f"got shape {inputs[2].shape}")
        out = out + (bias if channel_last else bias.reshape(-1, 1, 1))
    return result(out if batched else out[0], numerics)


@kernel("Conv2d")
def conv2d(inputs, attrs, numerics):
    channel_last = bool(attrs.get("channel_last", False))
    groups = int(attrs.get("groups", 1))
    x, batched, (channels, height, width) = _activations(inputs, channel_last)
    kernel_size = _kernel_size(inputs, attrs, "Conv2d")
    _check_shapes(inputs, channels, kernel_size, False, groups)
    window = make_window(kernel_size, attrs.get("stride", 1), attrs.get("dilation", 1),
                         attrs.get("padding", "same"), height, width)
    window.output_size(height, width)  # a kernel larger than the padded input is a clear error
    kernels = _weight_slices(inputs[1], kernel_size, False, groups, numerics.math_fidelity)
    out = _convolve(x, inputs[0].data_format, kernels, window, groups, channel_last, numerics)
    return _finish(out, inputs, batched, channel_last, numerics)


@kernel("Conv2dTranspose")
def conv2d_transpose(inputs, attrs, numerics):
    channel_last = bool(attrs.get("channel_last", False))
    groups = int(attrs.get("groups", 1))
    x, batched, (channels, _, _) = _activations(inputs, channel_last)
    kernel_size = _kernel_size(inputs, attrs, "Conv2dTranspose")
    _check_shapes(inputs, channels, kernel_size, True, groups)
    stride, dilation = pair(attrs.get("stride", 1), "stride"), pair(attrs.get("dilation", 1), "dilation")
    extra_h, extra_w = pair(attrs.get("output_padding", 0), "output_padding")
    left, right, top, bottom = _transposed_padding(attrs.get("padding", "same"), kernel_size, stride, dilation)
    # Spread the input out by the stride, then pad so a stride-1 convolution yields every output.
    ext_h, ext_w = (d * (k - 1) for k, d in zip(kernel_size, dilation))
    window = Window(tuple(kernel_size), (1, 1), dilation,
                    (ext_w - left, ext_w - right + extra_w, ext_h - top, ext_h - bottom + extra_h))
    kernels = _weight_slices(inputs[1], kernel_size, True, groups, numerics.math_fidelity)
    out = _convolve(x, inputs[0].data_format, kernels, window, groups, channel_last, numerics, spread=stride)
    return _finish(out, inputs, batched, channel_last, numerics)


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
