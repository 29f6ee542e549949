"""`tvm-buda demo`: a small model from each framework, compiled for the buda device, run on the
simulator and compared with the framework's own output, with the estimated throughput."""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from buda_runtime_sim.verify import compare

BOARD = "wh_n150"


@dataclass(frozen=True)
class DemoCase:
    name: str
    framework: str
    make: Callable[[Path], tuple]   # workdir -> (model, sample_inputs, golden_fn)


def _pytorch(build, make_inputs):
    def make(_workdir):
        import torch

        torch.manual_seed(0)
        model, inputs = build(), make_inputs(torch)

        def golden():
            with torch.no_grad():
                out = model(*inputs)
            return getattr(out, "last_hidden_state", out)

        return model, inputs, golden

    return make


def _keras_cnn():
    import keras

    keras.utils.set_random_seed(0)
    x = keras.Input((16, 16, 3), name="image")
    h = keras.layers.MaxPooling2D(2)(keras.layers.Conv2D(8, 3, padding="same", activation="relu")(x))
    return keras.Model(x, keras.layers.Dense(10)(keras.layers.Flatten()(h)), name="keras_cnn")


def _tensorflow(_workdir):
    from .modules import TFModule

    model = _keras_cnn()
    image = np.random.default_rng(0).standard_normal((2, 16, 16, 3)).astype(np.float32)
    return TFModule("keras_cnn", model), (image,), lambda: model(image).numpy()


def _tflite(workdir):
    import tensorflow as tf

    from .modules import TFLiteModule

    model = _keras_cnn()
    path = workdir / "keras_cnn.tflite"
    path.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    image = np.random.default_rng(1).standard_normal((1, 16, 16, 3)).astype(np.float32)
    return TFLiteModule("tflite_cnn", str(path)), (image,), lambda: model(image).numpy()


def _jax(_workdir):
    import jax
    import jax.numpy as jnp

    from .modules import JaxModule

    rng = np.random.default_rng(0)
    w1, w2 = (jnp.asarray(rng.standard_normal(s).astype(np.float32) / np.sqrt(s[0])) for s in ((64, 128), (128, 10)))

    def mlp(x):
        return jax.nn.gelu(x @ w1, approximate=False) @ w2

    x = rng.standard_normal((8, 64)).astype(np.float32)
    return JaxModule("jax_mlp", mlp), (x,), lambda: np.asarray(mlp(x))


def _onnx(_workdir):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from .frontends.onnx import run_onnxruntime
    from .modules import OnnxModule

    rng = np.random.default_rng(0)
    w1, b1, w2 = (rng.standard_normal(s).astype(np.float32) / 8 for s in ((64, 128), (128,), (128, 10)))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
         helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])],
        "onnx_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 10])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    onnx.checker.check_model(model)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    return OnnxModule("onnx_mlp", model), (x,), lambda: run_onnxruntime(model, (x,))[0]


def demo_cases() -> list[DemoCase]:
    from . import demo_models as m

    return [
        DemoCase("mlp", "pytorch", _pytorch(m.mlp, lambda torch: (torch.randn(8, 64),))),
        DemoCase("embedding_cumsum", "pytorch",
                 _pytorch(m.embedding_cumsum, lambda torch: (torch.randint(0, 100, (2, 16)),))),
        DemoCase("bert_encoder_2l", "pytorch", _pytorch(m.bert_encoder, lambda torch: (torch.randn(1, 128, 768),))),
        DemoCase("keras_cnn", "tensorflow", _tensorflow),
        DemoCase("tflite_cnn", "tflite", _tflite),
        DemoCase("jax_mlp", "jax", _jax),
        DemoCase("onnx_mlp", "onnx", _onnx),
    ]


def _first(out):
    if isinstance(out, dict):
        return next(iter(out.values()))
    return out[0] if isinstance(out, (tuple, list)) else out


def run_demo(print_fn=print, only: str | None = None) -> bool:
    """Run every demo case; returns True if all of them pass PyBuda's accuracy rule."""
    from .model_compiler import compile_model

    cases = [c for c in demo_cases() if only in (None, c.name)]
    if not cases:
        raise ValueError(f"no demo model {only!r}; choose from {[c.name for c in demo_cases()]}")
    ok = True
    header = (f"{'model':<18} {'framework':<10} {'on device':>9} {'breaks':>6} {'compile s':>9} {'run s':>6}  "
              f"{'accuracy vs framework':<52} {'est. samples/s (' + BOARD + ')':>26}")
    print_fn(header)
    print_fn("-" * len(header))
    with tempfile.TemporaryDirectory() as workdir:
        for case in cases:
            with contextlib.redirect_stdout(io.StringIO()):  # framework converters print progress
                model, inputs, golden = case.make(Path(workdir))
                start = time.perf_counter()
                compiled = compile_model(model, inputs, name=case.name)
            compiled_at = time.perf_counter()
            out = _first(compiled.run(*inputs))
            ran_at = time.perf_counter()
            result = compare(np.asarray(out), np.asarray(_first(golden())))
            ok &= result.passed
            summary = compiled.partition_summary()
            estimate = compiled.perf_report(BOARD).samples_per_second
            print_fn(f"{case.name:<18} {case.framework:<10} {100 * summary.device_fraction:>8.0f}% "
                     f"{summary.graph_breaks:>6} {compiled_at - start:>9.2f} {ran_at - compiled_at:>6.2f}  "
                     f"{str(result):<52} {estimate:>26,.0f}")
    return ok
