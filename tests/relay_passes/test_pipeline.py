"""The pass pipeline as a whole: one ordered list, a verify hook, and what it buys end to end:
elementwise GELU / layer norm / softmax as one device op each, attention in one device subgraph."""

import math

import numpy as np
import torch
from tvm.script import ir as I
from tvm.script import relax as R

import tvm_buda
from relay_passes import buda_pass_pipeline
from tests.helpers import assert_matches_golden


def test_pipeline_is_one_ordered_list_of_named_passes():
    pipeline = buda_pass_pipeline()
    assert len(set(pipeline.names)) == len(pipeline.names)
    assert all(p.why for p in pipeline.passes)
    order = pipeline.names
    # reconstruction reads forms that canonicalisation produces and decomposition destroys
    assert order.index("divide_by_constant_as_multiply") < order.index("reconstruct_gelu")
    assert order.index("reconstruct_layer_norm") < order.index("decompose_elementwise")
    assert order[-1] == "dead_code_elimination"


def test_verify_hook_runs_after_every_pass_with_its_name():
    seen = []
    buda_pass_pipeline()(OnnxGelu, verify=lambda name, mod: seen.append(name))
    assert seen == buda_pass_pipeline().names


class ElementwiseBlock(torch.nn.Module):
    """GELU and layer norm written out the way model code often does."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(32))
        self.b = torch.nn.Parameter(torch.randn(32))

    def forward(self, x):
        g = 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
        m = g.mean(-1, keepdim=True)
        v = ((g - m) ** 2).mean(-1, keepdim=True)
        return (g - m) / torch.sqrt(v + 1e-5) * self.w + self.b


def test_pytorch_elementwise_gelu_and_layer_norm_become_one_device_op_each():
    model, x = ElementwiseBlock().eval(), torch.randn(2, 5, 32)
    compiled = tvm_buda.compile_model(model, (x,))
    assert compiled.device_ops() == ["nn.gelu", "nn.layer_norm"]
    assert compiled.cpu_ops() == []
    assert_matches_golden(compiled.run(x), model(x).detach())


class Attention(torch.nn.Module):
    """torch.export decomposes SDPA into matmul/softmax plus PyTorch's safe-softmax guard."""

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def test_attention_with_the_safe_softmax_guard_is_one_device_subgraph():
    q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
    compiled = tvm_buda.compile_model(Attention(), (q, k, v))
    assert compiled.num_device_subgraphs == 1
    assert compiled.cpu_ops() == []
    assert "nn.softmax" in compiled.device_ops()
    assert_matches_golden(compiled.run(q, k, v), Attention()(q, k, v))


@I.ir_module
class OnnxGelu:
    """TVM's ONNX importer on the BERT GELU subgraph Div/Erf/Add/Mul/Mul."""

    @R.function
    def main(x: R.Tensor((4, 40), "float32")) -> R.Tensor((4, 40), "float32"):
        with R.dataflow():
            d = R.divide(x, R.const(1.4142135, "float32"))
            e = R.erf(d)
            a = R.add(e, R.const(1.0, "float32"))
            m = R.multiply(x, a)
            y = R.multiply(m, R.const(0.5, "float32"))
            R.output(y)
        return y


@I.ir_module
class OnnxLayerNorm:
    """ONNX's decomposed LayerNormalization (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add)."""

    @R.function
    def main(x: R.Tensor((4, 40), "float32"), w: R.Tensor((40,), "float32"), b: R.Tensor((40,), "float32")):
        with R.dataflow():
            m = R.mean(x, axis=[-1], keepdims=True)
            d = R.subtract(x, m)
            p = R.power(d, R.const(2.0, "float32"))
            v = R.mean(p, axis=[-1], keepdims=True)
            ve = R.add(v, R.const(1e-5, "float32"))
            s = R.sqrt(ve)
            n = R.divide(d, s)
            g = R.multiply(n, w)
            y = R.add(g, b)
            R.output(y)
        return y


@I.ir_module
class TfliteGelu:
    """TVM's TFLite importer for the GELU builtin."""

    @R.function
    def main(x: R.Tensor((4, 40), "float32")) -> R.Tensor((4, 40), "float32"):
        with R.dataflow():
            s = R.multiply(x, R.const(0.70710677, "float32"))
            e = R.erf(s)
            h = R.multiply(e, R.const(0.5, "float32"))
            phi = R.add(R.const(0.5, "float32"), h)
            y = R.multiply(x, phi)
            R.output(y)
        return y


@I.ir_module
class TfliteLayerNorm:
    """TVM's TFLite importer on Keras LayerNormalization."""

    @R.function
    def main(x: R.Tensor((4, 40), "float32"), w: R.Tensor((40,), "float32"), b: R.Tensor((40,), "float32")):
        with R.dataflow():
            m = R.mean(x, axis=[-1], keepdims=True)
            d = R.subtract(x, m)
            p = R.power(d, R.const(2.0, "float32"))
            v = R.mean(p, axis=[-1], keepdims=True)
            ve = R.add(v, R.const(1e-5, "float32"))
            r = R.rsqrt(ve)
            nm = R.negative(m)
            s = R.multiply(r, w)
            t = R.multiply(nm, s)
            u = R.multiply(x, s)
            sh = R.add(t, b)
            y = R.add(u, sh)
            R.output(y)
        return y


def _gelu(x):
    return torch.nn.functional.gelu(torch.from_numpy(x)).numpy()


def _layer_norm(x, w, b):
    x, w, b = (torch.from_numpy(a) for a in (x, w, b))
    return torch.nn.functional.layer_norm(x, (40,), w, b).numpy()


def test_onnx_and_tflite_forms_become_one_device_op_each():
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 40), (40,), (40,)))
    for mod, op, args, reference in [(OnnxGelu, "nn.gelu", (x,), _gelu), (TfliteGelu, "nn.gelu", (x,), _gelu),
                                     (OnnxLayerNorm, "nn.layer_norm", (x, w, b), _layer_norm),
                                     (TfliteLayerNorm, "nn.layer_norm", (x, w, b), _layer_norm)]:
        compiled = tvm_buda.build(mod, name="reconstructed")
        assert compiled.device_ops() == [op] and compiled.cpu_ops() == []
        assert_matches_golden(compiled.run(*args), reference(*args))
