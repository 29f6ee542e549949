"""ConvsChannelsLast: NCHW conv regions run NHWC with one transpose at each end; SimplifyLayoutChains
turns the bias permutes it leaves into reshapes; modules without convs are untouched."""

import numpy as np
import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.channels_last_convs import ConvsChannelsLast
from relay_passes.simplify_layout_chains import SimplifyLayoutChains
from tests.relay_passes.ir import run_llvm


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), "float32"), w1: R.Tensor((4, 3, 3, 3), "float32"),
             b: R.Tensor((4,), "float32"), w2: R.Tensor((4, 1, 3, 3), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, w1, padding=[1, 1, 1, 1])
            bias = R.reshape(b, R.shape([1, 4, 1, 1]))
            h = R.nn.relu(R.add(c, bias))
            p = R.nn.max_pool2d(h, pool_size=[2, 2], strides=[2, 2])
            d = R.nn.conv2d(p, w2, padding=[1, 1, 1, 1], groups=4)
            out = R.add(d, p)
            R.output(out)
        return out


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), "float32"), w1: R.Tensor((4, 3, 3, 3), "float32"),
             b: R.Tensor((4,), "float32"), w2: R.Tensor((4, 1, 3, 3), "float32")):
        with R.dataflow():
            x_nhwc = R.permute_dims(x, axes=[0, 2, 3, 1])
            c = R.nn.conv2d(x_nhwc, w1, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="OIHW",
                            out_layout="NHWC")
            bias = R.reshape(b, R.shape([1, 1, 1, 4]))
            h = R.nn.relu(R.add(c, bias))
            p = R.nn.max_pool2d(h, pool_size=[2, 2], strides=[2, 2], layout="NHWC", out_layout="NHWC")
            d = R.nn.conv2d(p, w2, padding=[1, 1, 1, 1], groups=4, data_layout="NHWC", kernel_layout="OIHW",
                            out_layout="NHWC")
            out_nhwc = R.add(d, p)
            out = R.permute_dims(out_nhwc, axes=[0, 3, 1, 2])
            R.output(out)
        return out


def _normalised(mod):
    return tvm.relax.transform.CanonicalizeBindings()(mod)


def test_conv_region_runs_channels_last_with_one_transpose_each_end():
    after = SimplifyLayoutChains()(ConvsChannelsLast()(Before))
    tvm.ir.assert_structural_equal(_normalised(after), _normalised(Expected))


@I.ir_module
class NoConv:
    @R.function
    def main(x: R.Tensor((2, 8), "float32")):
        with R.dataflow():
            y = R.nn.softmax(x, axis=-1)
            R.output(y)
        return y


def test_a_module_without_convs_is_left_alone():
    tvm.ir.assert_structural_equal(ConvsChannelsLast()(NoConv), NoConv)


@I.ir_module
class NegativeAxes:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            last = R.squeeze(R.expand_dims(c, axis=[-1]), axis=[-1])
            inner = R.squeeze(R.expand_dims(c, axis=[-3]), axis=[-3])
            tail = R.squeeze(R.expand_dims(c, axis=[-1, -2]), axis=[-2])
            out = R.add(R.add(last, inner), R.sum(tail, axis=[-1]))
            R.output(out)
        return out


def test_negative_expand_dims_and_squeeze_axes_convert_with_the_same_result():
    """ConvertLayout used to die (std::bad_alloc) on negative axes; now they are made positive first."""
    after = ConvsChannelsLast()(NegativeAxes)
    text = after.script()
    assert 'data_layout="NHWC"' in text and "axis=[-" not in text
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 3, 8, 8), dtype=np.float32), rng.standard_normal((4, 3, 3, 3), dtype=np.float32)
    np.testing.assert_allclose(run_llvm(after, x, w), run_llvm(NegativeAxes, x, w), rtol=1e-5, atol=1e-5)
