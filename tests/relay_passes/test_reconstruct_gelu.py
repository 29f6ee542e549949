"""ReconstructGelu: each framework's elementwise GELU becomes one nn.gelu / nn.gelu_tanh."""

import pytest
import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.reconstruct_gelu import ReconstructGelu


@I.ir_module
class TorchErf:
    """PyTorch (after x / sqrt(2) became x * 0.7071): (x * 0.5) * (erf(x * c) + 1)."""

    @R.function
    def main(x: R.Tensor((2, 16), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            half = R.multiply(x, R.const(0.5, "float32"))
            scaled = R.multiply(x, R.const(0.70710677, "float32"))
            e = R.erf(scaled)
            one_plus = R.add(e, R.const(1.0, "float32"))
            y = R.multiply(half, one_plus)
            R.output(y)
        return y


@I.ir_module
class OnnxErf:
    """ONNX (BERT export): ((erf(x * c) + 1) * x) * 0.5, constants on the left where ONNX puts them."""

    @R.function
    def main(x: R.Tensor((2, 16), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            scaled = R.multiply(x, R.const(0.70710677, "float32"))
            e = R.erf(scaled)
            one_plus = R.add(R.const(1.0, "float32"), e)
            times_x = R.multiply(one_plus, x)
            y = R.multiply(times_x, R.const(0.5, "float32"))
            R.output(y)
        return y


@I.ir_module
class TfliteErf:
    """TVM's TFLite importer for the GELU builtin: x * (0.5 + erf(x * c) * 0.5)."""

    @R.function
    def main(x: R.Tensor((2, 16), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            scaled = R.multiply(x, R.const(0.70710677, "float32"))
            e = R.erf(scaled)
            half_e = R.multiply(e, R.const(0.5, "float32"))
            phi = R.add(R.const(0.5, "float32"), half_e)
            y = R.multiply(x, phi)
            R.output(y)
        return y


@I.ir_module
class ExpectedErf:
    @R.function
    def main(x: R.Tensor((2, 16), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            y = R.nn.gelu(x)
            R.output(y)
        return y


@I.ir_module
class TorchTanh:
    """PyTorch / HF gelu_new: (x * 0.5) * (tanh((x + x ** 3 * 0.044715) * sqrt(2 / pi)) + 1)."""

    @R.function
    def main(x: R.Tensor((2, 16), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            half = R.multiply(x, R.const(0.5, "float32"))
            cube = R.power(x, R.const(3.0, "float32"))
            small = R.multiply(cube, R.const(0.044715, "float32"))
            inner = R.add(x, small)
            scaled = R.multiply(inner, R.const(0.7978846, "float32"))
            t = R.tanh(scaled)
            one_plus = R.add(t, R.const(1.0, "float32"))
            y = R.multiply(half, one_plus)
            R.output(y)
        return y


@I.ir_module
class JaxTanh:
    """JAX's approximate gelu through jax2tf: x * ((tanh(...) + 1) * 0.5), the cube as x * x * x."""

    @R.function
    def main(x: R.Tensor((2, 16), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            square = R.multiply(x, x)
            cube = R.multiply(square, x)
            small = R.multiply(R.const(0.044715, "float32"), cube)
            inner = R.add(x, small)
            scaled = R.multiply(R.const(0.7978846, "float32"), inner)
            t = R.tanh(scaled)
            one_plus = R.add(t, R.const(1.0, "float32"))
            phi = R.multiply(one_plus, R.const(0.5, "float32"))
            y = R.multiply(x, phi)
            R.output(y)
        return y


@I.ir_module
class ExpectedTanh:
    @R.function
    def main(x: R.Tensor((2, 16), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            y = R.nn.gelu_tanh(x)
            R.output(y)
        return y


@pytest.mark.parametrize("before, expected", [(TorchErf, ExpectedErf), (OnnxErf, ExpectedErf),
                                              (TfliteErf, ExpectedErf), (TorchTanh, ExpectedTanh),
                                              (JaxTanh, ExpectedTanh)],
                         ids=["torch", "onnx", "tflite", "torch_tanh", "jax_tanh"])
def test_gelu_forms_become_one_op(before, expected):
    tvm.ir.assert_structural_equal(ReconstructGelu()(before), expected)


@I.ir_module
class WrongConstant:
    @R.function
    def main(x: R.Tensor((2, 16), "float32")) -> R.Tensor((2, 16), "float32"):
        with R.dataflow():
            half = R.multiply(x, R.const(0.5, "float32"))
            scaled = R.multiply(x, R.const(0.6, "float32"))
            e = R.erf(scaled)
            one_plus = R.add(e, R.const(1.0, "float32"))
            y = R.multiply(half, one_plus)
            R.output(y)
        return y


def test_a_look_alike_with_other_constants_is_left_alone():
    tvm.ir.assert_structural_equal(ReconstructGelu()(WrongConstant), WrongConstant)
