"""ReconstructLayerNorm: the PyTorch/ONNX and TFLite elementwise forms become one nn.layer_norm."""

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.reconstruct_layer_norm import ReconstructLayerNorm


@I.ir_module
class TorchForm:
    """What torch.export gives for (x - m) / sqrt(((x - m) ** 2).mean(-1) + eps) * w + b (after CSE)."""

    @R.function
    def main(x: R.Tensor((1, 8, 16), "float32"), w: R.Tensor((16,), "float32"), b: R.Tensor((16,), "float32")):
        with R.dataflow():
            mean = R.mean(x, axis=[-1], keepdims=True)
            centred = R.subtract(x, mean)
            squared = R.power(centred, R.const(2.0, "float32"))
            var = R.mean(squared, axis=[-1], keepdims=True)
            var_eps = R.add(var, R.const(1e-5, "float32"))
            std = R.sqrt(var_eps)
            normed = R.divide(centred, std)
            scaled = R.multiply(normed, w)
            y = R.add(scaled, b)
            R.output(y)
        return y


@I.ir_module
class ExpectedTorch:
    @R.function
    def main(x: R.Tensor((1, 8, 16), "float32"), w: R.Tensor((16,), "float32"), b: R.Tensor((16,), "float32")):
        with R.dataflow():
            y = R.nn.layer_norm(x, w, b, axes=[-1], epsilon=9.9999997473787516e-06)  # float32(1e-5)
            R.output(y)
        return y


@I.ir_module
class OnnxForm:
    """ONNX (tf2onnx / older torch exports): Mul(d, d) for the square, Reciprocal-free rsqrt path."""

    @R.function
    def main(x: R.Tensor((1, 8, 16), "float32"), w: R.Tensor((16,), "float32"), b: R.Tensor((16,), "float32")):
        with R.dataflow():
            mean = R.mean(x, axis=[2], keepdims=True)
            centred = R.subtract(x, mean)
            squared = R.multiply(centred, centred)
            var = R.mean(squared, axis=[2], keepdims=True)
            var_eps = R.add(var, R.const(1e-5, "float32"))
            inv_std = R.rsqrt(var_eps)
            normed = R.multiply(centred, inv_std)
            scaled = R.multiply(w, normed)
            y = R.add(b, scaled)
            R.output(y)
        return y


@I.ir_module
class TfliteForm:
    """TVM's TFLite importer on Keras LayerNormalization: x * s + (-mean * s + beta)."""

    @R.function
    def main(x: R.Tensor((1, 8, 16), "float32"), w: R.Tensor((16,), "float32"), b: R.Tensor((16,), "float32")):
        with R.dataflow():
            mean = R.mean(x, axis=[-1], keepdims=True)
            centred = R.subtract(x, mean)
            squared = R.power(centred, R.const(2.0, "float32"))
            var = R.mean(squared, axis=[-1], keepdims=True)
            var_eps = R.add(var, R.const(1e-5, "float32"))
            inv_std = R.rsqrt(var_eps)
            neg_mean = R.negative(mean)
            scale = R.multiply(inv_std, w)
            shift = R.multiply(neg_mean, scale)
            x_scaled = R.multiply(x, scale)
            shifted = R.add(shift, b)
            y = R.add(x_scaled, shifted)
            R.output(y)
        return y


@pytest.mark.parametrize("before", [TorchForm, OnnxForm, TfliteForm], ids=["torch", "onnx", "tflite"])
def test_layer_norm_forms_become_one_op(before):
    """Whichever axis index the framework used (2 or -1), the result names it from the end."""
    tvm.ir.assert_structural_equal(ReconstructLayerNorm()(before), ExpectedTorch)


@I.ir_module
class NoAffine:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")):
        with R.dataflow():
            mean = R.mean(x, axis=[1], keepdims=True)
            centred = R.subtract(x, mean)
            squared = R.multiply(centred, centred)
            var = R.mean(squared, axis=[1], keepdims=True)
            var_eps = R.add(var, R.const(1e-6, "float32"))
            std = R.sqrt(var_eps)
            y = R.divide(centred, std)
            R.output(y)
        return y


def test_missing_gamma_and_beta_become_ones_and_zeros():
    after = ReconstructLayerNorm()(NoAffine)
    call = after["main"].body.blocks[0].bindings[0].value
    assert call.op.name == "relax.nn.layer_norm" and len(after["main"].body.blocks[0].bindings) == 1
    np.testing.assert_array_equal(call.args[1].value.numpy(), np.ones(8, np.float32))
    np.testing.assert_array_equal(call.args[2].value.numpy(), np.zeros(8, np.float32))
    assert abs(float(call.attrs.epsilon) - 1e-6) < 1e-12


@I.ir_module
class DifferentAxes:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")):
        with R.dataflow():
            mean = R.mean(x, axis=[0], keepdims=True)
            centred = R.subtract(x, mean)
            squared = R.multiply(centred, centred)
            var = R.mean(squared, axis=[1], keepdims=True)
            var_eps = R.add(var, R.const(1e-6, "float32"))
            std = R.sqrt(var_eps)
            y = R.divide(centred, std)
            R.output(y)
        return y


def test_statistics_over_different_axes_are_not_a_layer_norm():
    tvm.ir.assert_structural_equal(ReconstructLayerNorm()(DifferentAxes), DifferentAxes)


def test_reconstructed_layer_norm_computes_the_same_values():
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((1, 8, 16), (16,), (16,))]

    def run(mod):
        vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
        return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()

    np.testing.assert_allclose(run(ReconstructLayerNorm()(TfliteForm)), run(TfliteForm), rtol=1e-5, atol=1e-5)
