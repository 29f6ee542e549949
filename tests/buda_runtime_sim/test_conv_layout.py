"""Convolutions in the device's layout: kernels held as [kH*kW*Cin/g, Cout] matrices, activations
channels-last; numerics vs torch for every conv form, and memory of a conv parameter."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.formats import quantize
from buda_runtime_sim.kernels.conv_weights import ConvWeightLayout, weight_matrix
from buda_runtime_sim.module import Parameter
from buda_runtime_sim.numerics_config import NumericsConfig
from buda_runtime_sim.tensor import round_up

RNG = np.random.default_rng(7)
FIDELITY_RTOL = 4e-3  # HiFi4 still drops SrcA's lowest TF32 bit


@pytest.fixture
def exact():
    numerics = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                              math_fidelity=MathFidelity.HiFi4)
    with context.use(context.ExecutionContext(numerics=numerics)):
        yield


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _param(value, name="w"):
    return Parameter(torch.from_numpy(value), requires_grad=False, name=name)


def _close(out, golden, rtol=FIDELITY_RTOL):
    out = out.numpy()
    assert out.shape == golden.shape
    assert np.abs(out - golden).max() <= rtol * np.abs(golden).max(), np.abs(out - golden).max()


def test_a_conv_parameter_is_held_as_its_tile_padded_matrix(exact):
    x = _data(1, 16, 16, 64)
    weight = _param(_data(64, 64, 3, 3))
    pybuda.op.Conv2d("c", x, weight, padding=1, channel_last=True)
    matrix_bytes = 3 * 3 * 64 * 64 * 4                   # [576, 64]: already whole tiles
    assert weight.device_bytes() == matrix_bytes
    assert weight.device_bytes() * 100 < 64 * 64 * 32 * 32 * 4   # not a 32x32 tile per 3x3 slice (113x)


def test_an_unaligned_kernel_pads_like_a_matrix(exact):
    x = _data(1, 3, 20, 20)
    weight = _param(_data(10, 3, 7, 7))
    pybuda.op.Conv2d("stem", x, weight, stride=2, padding=3)
    assert weight.device_bytes() == round_up(7 * 7 * 3) * round_up(10) * 4   # [147, 10] -> [160, 32]


def test_block_formats_share_exponents_along_output_channels():
    """The device stores the matrix, so a Bfp8 block is 16 output channels of one (kh, kw, cin) row."""
    w = _data(32, 8, 3, 3)
    w[0] *= 1000.0  # output channel 0 is huge: crushes its block-mates, never other rows
    stored = _param(w).device_tensor(DataFormat.Bfp8_b, ConvWeightLayout(False, 1)).logical()
    np.testing.assert_array_equal(stored, quantize(weight_matrix(w), DataFormat.Bfp8_b))
    assert np.array_equal(stored[:, 16:], quantize(weight_matrix(w)[:, 16:], DataFormat.Bfp8_b))


CONVS = {
    "plain": (dict(stride=1, padding=1, dilation=1, groups=1), 6, 12, 3),
    "strided": (dict(stride=2, padding=0, dilation=1, groups=1), 6, 12, 3),
    "padded-asymmetric": (dict(stride=(2, 1), padding=(0, 1, 2, 1), dilation=1, groups=1), 6, 12, 3),
    "grouped-dilated": (dict(stride=1, padding=2, dilation=2, groups=3), 6, 12, 3),
    "depthwise": (dict(stride=1, padding=1, dilation=1, groups=6), 6, 6, 3),
    "pointwise": (dict(stride=1, padding=0, dilation=1, groups=1), 6, 40, 1),
}


@pytest.mark.parametrize("case", CONVS, ids=list(CONVS))
@pytest.mark.parametrize("channel_last", [True, False], ids=["nhwc", "nchw"])
def test_conv2d_with_matrix_weights_matches_torch(exact, case, channel_last):
    attrs, cin, cout, k = CONVS[case]
    x, w, bias = _data(2, cin, 11, 13), _data(cout, cin // attrs["groups"], k, k), _data(cout)
    padding = attrs["padding"]
    pads = (padding,) * 4 if isinstance(padding, int) else padding
    golden = F.conv2d(F.pad(torch.from_numpy(x), pads), torch.from_numpy(w), torch.from_numpy(bias),
                      stride=attrs["stride"], dilation=attrs["dilation"], groups=attrs["groups"]).numpy()
    if channel_last:
        x, golden = x.transpose(0, 2, 3, 1), golden.transpose(0, 2, 3, 1)
    out = pybuda.op.Conv2d("c", x, _param(w), _param(bias, "b"), channel_last=channel_last, **attrs)
    _close(out, golden)


@pytest.mark.parametrize("stride, padding, groups", [(2, 1, 1), (2, 0, 2), (1, 1, 4)])
def test_conv2d_transpose_with_matrix_weights_matches_torch(exact, stride, padding, groups):
    x, w = _data(1, 4, 6, 5), _data(4, 8 // groups, 3, 3)
    golden = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=stride, padding=padding,
                                groups=groups).numpy().transpose(0, 2, 3, 1)
    out = pybuda.op.Conv2dTranspose("ct", x.transpose(0, 2, 3, 1), _param(w), stride=stride, padding=padding,
                                    groups=groups, channel_last=True)
    _close(out, golden)


@pytest.mark.parametrize("fidelity", [MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi3])
def test_matrix_weights_give_the_same_numbers_as_framework_kernels(fidelity):
    """Where rounding is per value (Float16_b), the layout the device holds changes no result."""
    numerics = NumericsConfig(math_fidelity=fidelity)
    x, w = _data(1, 9, 9, 8), _data(16, 8, 3, 3)
    with context.use(context.ExecutionContext(numerics=numerics)):
        as_matrix = pybuda.op.Conv2d("c", x, _param(w), padding=1, channel_last=True).numpy()
        as_kernel = pybuda.op.Conv2d("c", x, w, padding=1, channel_last=True).numpy()
    np.testing.assert_array_equal(as_matrix, as_kernel)


def test_a_matrix_needs_its_kernel_size(exact):
    with pytest.raises(ValueError, match="kernel_size"):
        pybuda.op.Conv2d("c", _data(1, 5, 5, 4), weight_matrix(_data(8, 4, 3, 3)), channel_last=True)


@pytest.mark.parametrize("pool", ["max", "avg"])
def test_channels_last_pools_match_torch(exact, pool):
    x = _data(1, 8, 15, 14)
    if pool == "max":
        golden = F.max_pool2d(torch.from_numpy(x), 3, 2, 1).numpy()
        out = pybuda.op.MaxPool2d("p", x.transpose(0, 2, 3, 1), 3, stride=2, padding=1, channel_last=True)
    else:
        golden = F.avg_pool2d(torch.from_numpy(x), 3, 2, 1, count_include_pad=False).numpy()
        out = pybuda.op.AvgPool2d("p", x.transpose(0, 2, 3, 1), 3, stride=2, padding=1, count_include_pad=False,
                                  channel_last=True)
    np.testing.assert_allclose(out.numpy(), golden.transpose(0, 2, 3, 1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("groups", [1, 3, 6])
@pytest.mark.parametrize("channel_last", [True, False], ids=["nhwc", "nchw"])
def test_hifi3_terms_stacked_along_channels_keep_groups_apart(groups, channel_last):
    """HiFi3's two phase terms run as one convolution over [full | low] input channels per group."""
    numerics = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                              math_fidelity=MathFidelity.HiFi3)
    x, w = _data(1, 6, 9, 8), _data(12, 6 // groups, 3, 3)
    golden = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1, groups=groups).numpy()
    if channel_last:
        x, golden = x.transpose(0, 2, 3, 1), golden.transpose(0, 2, 3, 1)
    with context.use(context.ExecutionContext(numerics=numerics)):
        out = pybuda.op.Conv2d("c", x, _param(w), padding=1, groups=groups, channel_last=channel_last)
    _close(out, golden)


def test_a_kernel_that_does_not_fit_names_the_op_and_its_matrix(exact):
    with pytest.raises(ValueError, match=r"Conv2d 'c': weights of shape \(27, 8\) \(the \[kH\*kW\*Cin/groups, Cout\]"):
        pybuda.op.Conv2d("c", _data(1, 5, 5, 4), _param(_data(8, 3, 3, 3)), channel_last=True)
    with pytest.raises(ValueError, match="Conv2dTranspose 'ct': weights"):
        pybuda.op.Conv2dTranspose("ct", _data(1, 5, 5, 3), _param(_data(3, 2, 3, 3)), groups=2, channel_last=True)
