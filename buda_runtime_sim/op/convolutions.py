"""Convolutions and pooling (PyBuda API reference, "Convolutions").

padding: "same" (TensorFlow's rule), "valid", an int, or (left, right, top, bottom).
Conv weights given as a Parameter or constant are held on the device as a [kH*kW*Cin/g, Cout]
matrix (how PyBuda lowered convolutions), not as tile-padded 3x3 slices.
stride, dilation and kernel_size: an int or (height, width).
"""

from __future__ import annotations

from ..kernels.conv_weights import ConvWeightLayout
from ..module import Constant, Parameter
from .dispatch import pybuda_op, run_op
from .validate import Args


def _conv(op_type, name, activations, weights, bias, stride, padding, dilation, groups, channel_last, **extra):
    args = Args(op_type, name)
    if isinstance(weights, (list, tuple)):
        args.fail("weights", "as a pre-split list is internal to PyBuda's compiler; pass one weight tensor")
    groups = args.int("groups", groups, 1)
    inputs = [activations, weights] + ([bias] if bias is not None else [])
    layouts = {}
    if isinstance(weights, (Parameter, Constant)) and len(weights.shape) == 4:
        # The device holds a conv kernel as its [kH*kW*Cin/g, Cout] matrix (kernels/conv_weights.py).
        layouts[1] = ConvWeightLayout(op_type == "Conv2dTranspose", groups)
        extra["kernel_size"] = tuple(int(d) for d in weights.shape[2:])
    return run_op(op_type, name, inputs, layouts, stride=args.int_or_pair("stride", stride),
                  padding=args.padding("padding", padding), dilation=args.int_or_pair("dilation", dilation),
                  groups=groups, channel_last=args.bool("channel_last", channel_last), **extra)


@pybuda_op
def Conv2d(name, activations, weights, bias=None, stride=1, padding="same", dilation=1, groups=1,
           channel_last=False):
    """Weights (Cout, Cin / groups, kH, kW); bias (Cout)."""
    return _conv("Conv2d", name, activations, weights, bias, stride, padding, dilation, groups, channel_last)


@pybuda_op
def Conv2dTranspose(name, activations, weights, bias=None, stride=1, padding="same", dilation=1, groups=1,
                    channel_last=False, output_padding=0):
    """Weights (Cin, Cout / groups, kH, kW) as in PyTorch; output_padding (an extension) adds rows
    and columns at the bottom/right."""
    extra = {"output_padding": Args("Conv2dTranspose", name).int_or_pair("output_padding", output_padding, 0)}
    return _conv("Conv2dTranspose", name, activations, weights, bias, stride, padding, dilation, groups,
                 channel_last, **extra)


@pybuda_op
def MaxPool2d(name, activations, kernel_size, stride=1, padding="same", dilation=1, ceil_mode=False,
              return_indices=False, max_pool_add_sub_surround=False, max_pool_add_sub_surround_value=1.0,
              channel_last=False):
    args = Args("MaxPool2d", name)
    if return_indices:
        args.fail("return_indices", "is not supported: the device returns pooled values only")
    if max_pool_add_sub_surround:
        args.fail("max_pool_add_sub_surround", "is a PyBuda compiler workaround the simulator does not need")
    return run_op("MaxPool2d", name, [activations], kernel_size=args.int_or_pair("kernel_size", kernel_size),
                  stride=args.int_or_pair("stride", stride), padding=args.padding("padding", padding),
                  dilation=args.int_or_pair("dilation", dilation), ceil_mode=args.bool("ceil_mode", ceil_mode),
                  channel_last=args.bool("channel_last", channel_last))


@pybuda_op
def AvgPool2d(name, activations, kernel_size, stride=1, padding="same", ceil_mode=False, count_include_pad=True,
              divisor_override=None, channel_last=False):
    args = Args("AvgPool2d", name)
    if divisor_override is not None:
        divisor_override = args.float("divisor_override", divisor_override)
        if divisor_override == 0:
            args.fail("divisor_override", "must not be 0")
    return run_op("AvgPool2d", name, [activations], kernel_size=args.int_or_pair("kernel_size", kernel_size),
                  stride=args.int_or_pair("stride", stride), padding=args.padding("padding", padding),
                  ceil_mode=args.bool("ceil_mode", ceil_mode),
                  count_include_pad=args.bool("count_include_pad", count_include_pad),
                  divisor_override=divisor_override, channel_last=args.bool("channel_last", channel_last))
