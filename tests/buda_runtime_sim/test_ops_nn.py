"""Matmul, convolutions, pooling, reductions and normalisation kernels vs numpy/torch."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.numerics_config import NumericsConfig

RNG = np.random.default_rng(1)
FIDELITY_RTOL = 4e-3  # HiFi4 still drops SrcA's lowest TF32 bit


@pytest.fixture
def exact():
    numerics = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                              math_fidelity=MathFidelity.HiFi4)
    with context.use(context.ExecutionContext(numerics=numerics)):
        yield


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _close(out, golden, rtol=FIDELITY_RTOL):
    """Error relative to the largest golden magnitude (products of many terms cancel)."""
    out = out.numpy() if hasattr(out, "numpy") else out
    assert out.shape == golden.shape
    assert np.abs(out - golden).max() <= rtol * max(np.abs(golden).max(), 1e-6), np.abs(out - golden).max()


def _torch(x):
    return torch.from_numpy(np.ascontiguousarray(x))


@pytest.mark.parametrize("a_shape, b_shape", [((33, 47), (47, 5)), ((3, 33, 47), (47, 65)), ((2, 3, 9, 40), (3, 40, 7)),
                                              ((47,), (47, 5))])
def test_matmul_shapes_and_batch_broadcasting(exact, a_shape, b_shape):
    a, b = _data(*a_shape), _data(*b_shape)
    _close(pybuda.op.Matmul("mm", a, b), a @ b)


def test_matmul_with_bias_and_fidelity_ordering():
    a, b, bias = _data(64, 96), _data(96, 48), _data(48)
    golden = a @ b + bias
    errors = {}
    for fidelity in (MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi4):
        numerics = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                                  math_fidelity=fidelity)
        with context.use(context.ExecutionContext(numerics=numerics)):
            errors[fidelity] = np.abs(pybuda.op.Matmul("mm", a, b, bias).numpy() - golden).max()
    assert errors[MathFidelity.LoFi] >= errors[MathFidelity.HiFi2] >= errors[MathFidelity.HiFi4]
    assert errors[MathFidelity.HiFi4] <= FIDELITY_RTOL * np.abs(golden).max()


CONVS = [
    dict(stride=1, padding=1, dilation=1, groups=1),
    dict(stride=2, padding=(0, 1, 2, 1), dilation=1, groups=1),
    dict(stride=(1, 2), padding=2, dilation=2, groups=2),
    dict(stride=1, padding=1, dilation=1, groups=6),  # depthwise
]


def _torch_padding(padding):
    """(left, right, top, bottom) -> F.pad order for NCHW, and zero for conv's own padding."""
    return (padding,) * 4 if isinstance(padding, int) else padding


@pytest.mark.parametrize("attrs", CONVS, ids=["plain", "asym-stride2", "dilated-grouped", "depthwise"])
@pytest.mark.parametrize("channel_last", [False, True])
def test_conv2d(exact, attrs, channel_last):
    x, w, bias = _data(2, 6, 11, 13), _data(12, 6 // attrs["groups"], 3, 3), _data(12)
    xt = F.pad(_torch(x), _torch_padding(attrs["padding"]))
    golden = F.conv2d(xt, _torch(w), _torch(bias), stride=attrs["stride"], dilation=attrs["dilation"],
                      groups=attrs["groups"]).numpy()
    if channel_last:
        x, golden = x.transpose(0, 2, 3, 1), golden.transpose(0, 2, 3, 1)
    _close(pybuda.op.Conv2d("c", x, w, bias, channel_last=channel_last, **attrs), golden)


def test_conv2d_same_padding_follows_tensorflow(exact):
    x, w = _data(1, 3, 10, 10), _data(4, 3, 3, 3)
    out = pybuda.op.Conv2d("c", x, w, stride=2, padding="same")
    golden = F.conv2d(F.pad(_torch(x), (0, 1, 0, 1)), _torch(w), stride=2).numpy()  # TF puts the extra pixel after
    _close(out, golden)


@pytest.mark.parametrize("stride, padding, dilation, groups, output_padding",
                         [(2, 1, 1, 1, 1), (1, 0, 2, 2, 0), (3, 2, 1, 4, 2)])
def test_conv2d_transpose(exact, stride, padding, dilation, groups, output_padding):
    x, w, bias = _data(2, 4, 7, 6), _data(4, 8 // groups, 3, 3), _data(8)
    golden = F.conv_transpose2d(_torch(x), _torch(w), _torch(bias), stride=stride, padding=padding,
                                output_padding=output_padding, groups=groups, dilation=dilation).numpy()
    out = pybuda.op.Conv2dTranspose("ct", x, w, bias, stride=stride, padding=padding, dilation=dilation,
                                    groups=groups, output_padding=output_padding)
    _close(out, golden)


@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode",
                         [(3, 2, 1, 1, False), (3, 2, 1, 1, True), (2, 2, 0, 1, True), (3, 1, 1, 2, False)])
def test_max_pool2d_matches_torch(exact, kernel, stride, padding, dilation, ceil_mode):
    x = _data(2, 3, 11, 12)
    golden = F.max_pool2d(_torch(x), kernel, stride, padding, dilation, ceil_mode=ceil_mode).numpy()
    out = pybuda.op.MaxPool2d("p", x, kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=ceil_mode)
    np.testing.assert_array_equal(out.numpy(), golden)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_avg_pool2d_matches_torch(exact, count_include_pad, ceil_mode):
    x = _data(2, 3, 11, 12)
    golden = F.avg_pool2d(_torch(x), 3, 2, 1, ceil_mode=ceil_mode, count_include_pad=count_include_pad).numpy()
    out = pybuda.op.AvgPool2d("p", x, 3, stride=2, padding=1, ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    np.testing.assert_allclose(out.numpy(), golden, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kernel, stride, padding, count_include_pad",
                         [(320, 320, 0, True), (5, 3, 1, True), (5, 3, 1, False), ((6, 3), (4, 2), (1, 0), True)])
@pytest.mark.parametrize("op", ["avg", "max"])
def test_pool_windows_larger_than_the_input_with_ceil_mode(exact, op, kernel, stride, padding, count_include_pad):
    """PyTorch pools a map smaller than the kernel with ceil_mode (EfficientNet's pooler: a 320x320
    kernel over 2x2): each window overhanging the padded input counts only what it covers."""
    x = _data(2, 3, 2, 3)
    pad_h, pad_w = (padding, padding) if isinstance(padding, int) else padding
    buda_padding = (pad_w, pad_w, pad_h, pad_h)                  # PyBuda's (left, right, top, bottom)
    if op == "avg":
        golden = F.avg_pool2d(_torch(x), kernel, stride, padding, ceil_mode=True,
                              count_include_pad=count_include_pad).numpy()
        out = pybuda.op.AvgPool2d("p", x, kernel, stride=stride, padding=buda_padding, ceil_mode=True,
                                  count_include_pad=count_include_pad)
    else:
        golden = F.max_pool2d(_torch(x), kernel, stride, padding, ceil_mode=True).numpy()
        out = pybuda.op.MaxPool2d("p", x, kernel, stride=stride, padding=buda_padding, ceil_mode=True)
    np.testing.assert_allclose(out.numpy(), golden, rtol=1e-6)
    with pytest.raises(RuntimeError):          # without ceil_mode PyTorch refuses it, and so do we
        F.avg_pool2d(_torch(x), 320, 320)
    with pytest.raises(ValueError, match="larger than the padded input"):
        pybuda.op.AvgPool2d("p", x, 320, stride=320, padding=0)


def test_pooling_channel_last_and_divisor_override(exact):
    x = _data(1, 9, 9, 4)
    golden = F.max_pool2d(_torch(x.transpose(0, 3, 1, 2)), 2, 2).numpy().transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(pybuda.op.MaxPool2d("p", x, 2, stride=2, padding=0, channel_last=True).numpy(),
                                  golden)
    golden = F.avg_pool2d(_torch(x.transpose(0, 3, 1, 2)), 3, 3, divisor_override=2).numpy().transpose(0, 2, 3, 1)
    out = pybuda.op.AvgPool2d("p", x, 3, stride=3, padding=0, divisor_override=2, channel_last=True)
    np.testing.assert_allclose(out.numpy(), golden, rtol=1e-6)


@pytest.mark.parametrize("op, reference", [("ReduceSum", np.sum), ("ReduceAvg", np.mean), ("ReduceMax", np.max),
                                           ("ReduceMin", np.min)])
@pytest.mark.parametrize("dim", [0, 1, -2, -1])
def test_reductions_keep_the_dim(exact, op, reference, dim):
    x = _data(2, 3, 9, 10)
    out = getattr(pybuda.op, op)("r", x, dim)
    np.testing.assert_allclose(out.numpy(), reference(x, axis=dim, keepdims=True), rtol=1e-5, atol=1e-6)
    dropped = getattr(pybuda.op, op)("r", x, dim, keep_dim=False)
    assert dropped.shape == reference(x, axis=dim).shape


def test_argmax_is_exact_int(exact):
    x = _data(3, 300)
    out = pybuda.op.Argmax("a", x, dim=-1)
    assert out.numpy().dtype == np.int32
    np.testing.assert_array_equal(out.numpy(), np.argmax(x, axis=-1)[:, None])
    assert pybuda.op.Argmax("a", x).numpy().reshape(()) == np.argmax(x)


@pytest.mark.parametrize("dim", [-1, 1])
@pytest.mark.parametrize("stable", [True, False])
def test_softmax_and_log_softmax(exact, dim, stable):
    x = _data(2, 5, 40)
    golden = torch.softmax(_torch(x), dim).numpy()
    np.testing.assert_allclose(pybuda.op.nn.Softmax("s", x, dim=dim, stable=stable).numpy(), golden, rtol=1e-5,
                               atol=1e-7)
    golden = torch.log_softmax(_torch(x), dim).numpy()
    np.testing.assert_allclose(pybuda.op.nn.LogSoftmax("s", x, dim=dim, stable=stable).numpy(), golden, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("dim", [-1, 1])
def test_layernorm(exact, dim):
    x = _data(2, 6, 40)
    size = x.shape[dim]
    gamma, beta = _data(size), _data(size)
    golden = torch.nn.functional.layer_norm(_torch(np.moveaxis(x, dim, -1)), (size,), _torch(gamma), _torch(beta),
                                            eps=1e-5).numpy()
    out = pybuda.op.nn.Layernorm("ln", x, gamma, beta, dim=dim, epsilon=1e-5).numpy()
    np.testing.assert_allclose(out, np.moveaxis(golden, -1, dim), rtol=1e-4, atol=1e-5)


def test_bfp8_lofi_matmul_stays_within_a_stated_bound():
    """Bfp8_b operands at LoFi: within 5% of the largest output (PyBuda's own tolerance is 10%)."""
    a, b = _data(64, 128), _data(128, 32)
    numerics = NumericsConfig(default_df_override=DataFormat.Bfp8_b, math_fidelity=MathFidelity.LoFi)
    with context.use(context.ExecutionContext(numerics=numerics)):
        out = pybuda.op.Matmul("mm", a, b).numpy()
    golden = a @ b
    assert np.abs(out - golden).max() <= 0.05 * np.abs(golden).max()
