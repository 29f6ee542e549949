"""TT device images: a PyTorch BERT-style encoder, a Keras CNN and an ONNX model saved with
TTDevice.compile_to_image run from the image, in a fresh process that never imports a framework
frontend, bit for bit like the compiled model."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.numpy import save_file

import pybuda

ROOT = Path(__file__).resolve().parents[3]


def _tiny_bert():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(hidden_size=64, num_attention_heads=2, intermediate_size=128, num_hidden_layers=2)
    encoder = BertModel(config).eval().encoder

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder

        def forward(self, hidden):
            return self.encoder(hidden).last_hidden_state

    return Encoder().eval(), torch.randn(1, 32, 64)


def _onnx_mlp():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((32, 64), np.float32), rng.standard_normal(64, np.float32)
    w2 = rng.standard_normal((64, 16), np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
         helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])],
        "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    onnx.checker.check_model(model)
    return model, rng.standard_normal((4, 32), np.float32)


def _keras_cnn():
    pytest.importorskip("tensorflow")
    from tests.tvm_buda.frontends.keras_models import cnn

    return cnn(), np.random.default_rng(0).standard_normal((2, 8, 8, 3)).astype(np.float32)


def _save(module, x, path):
    """compile_to_image on a fresh TTDevice; returns the compiled model's own output as numpy."""
    pybuda.shutdown()
    tt0 = pybuda.TTDevice("tt0", arch=pybuda.BackendDevice.Wormhole_B0, module=module)
    img = tt0.compile_to_image(img_path=str(path), sample_inputs=(x,))
    out = tt0.compiled[id(module)].run(x)
    pybuda.shutdown()
    return img, np.asarray(out.numpy() if hasattr(out, "numpy") else out)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Three images (PyTorch, Keras, ONNX) with their inputs and the compiled models' outputs."""
    tmp = tmp_path_factory.mktemp("images")
    bert, h = _tiny_bert()
    onnx_model, xo = _onnx_mlp()
    keras_model, xk = _keras_cnn()
    cases = {"bert": (pybuda.PyTorchModule("bert", bert), h), "keras_cnn": (pybuda.TFModule("keras_cnn", keras_model), xk),
             "onnx_mlp": (pybuda.OnnxModule("onnx_mlp", onnx_model), xo)}
    out = {}
    for name, (module, x) in cases.items():
        img, expected = _save(module, x, tmp / f"{name}.tti")
        x = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
        save_file({"input": np.ascontiguousarray(x), "expected": np.ascontiguousarray(expected)},
                  str(tmp / f"{name}.io.safetensors"))
        out[name] = (tmp / f"{name}.tti", x, expected, img)
    return out


LOADER = textwrap.dedent("""
    import json, sys
    import numpy as np, torch
    from safetensors.numpy import load_file

    def forbidden(*args, **kwargs):
        raise AssertionError("tracing or compiling while loading an image")

    torch.export.export = forbidden           # nothing may trace or compile
    import tvm
    tvm.compile = forbidden
    import pybuda

    results = {}
    for path in sys.argv[1:]:
        io = load_file(path.replace(".tti", ".io.safetensors"))
        img = pybuda.TTDeviceImage.load_from_disk(path)
        device = pybuda.TTDevice.load_image(img=img)
        device.push_to_inputs([io["input"]])
        out = pybuda.run_inference().get()[0].to_framework("numpy")
        results[path] = bool(out.dtype == io["expected"].dtype and np.array_equal(out, io["expected"]))
        pybuda.shutdown()
    frontends = ("tensorflow", "keras", "onnx", "onnxruntime", "jax", "jaxlib", "tflite", "tf2onnx", "transformers",
                 "tvm.relax.frontend.torch", "tvm.relax.frontend.onnx", "tvm.relax.frontend.tflite",
                 "tvm_buda.frontends.pytorch", "tvm_buda.frontends.tensorflow", "tvm_buda.frontends.onnx",
                 "tvm_buda.frontends.jax", "tvm_buda.frontends.tflite")
    imported = sorted(m for m in sys.modules if m in frontends or m.split(".")[0] in frontends[:9])
    print(json.dumps({"equal": results, "frontends": imported}))
""")


def test_images_run_in_a_fresh_process_without_frontends_bit_for_bit(saved):
    paths = [str(path) for path, *_ in saved.values()]
    result = subprocess.run([sys.executable, "-c", LOADER, *paths], capture_output=True, text=True, cwd=ROOT,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["frontends"] == [], f"loading an image imported frontends: {report['frontends']}"
    assert report["equal"] == {p: True for p in paths}


def test_image_metadata_matches_the_compiled_models(saved):
    path, x, expected, img = saved["keras_cnn"]
    assert img.get_input_shapes() == [list(x.shape)]
    entry = img.model()
    assert entry["framework"] == "tensorflow" and entry["outputs"][0]["shape"] == list(expected.shape)
    assert img.device["device"]["device_config"] == "wh_n150" and img.arch == pybuda.BackendDevice.Wormhole_B0
    placement = json.loads(img.member(entry["placement"]).read_text())
    assert placement["epochs"] and {q["kind"] for q in placement["queues"]} >= {"static", "dynamic"}
    assert all(m in img.device["members"] for m in entry["members"])


def test_a_loaded_image_runs_in_process_too_and_starts_warm(saved):
    path, x, expected, _ = saved["bert"]
    compiled = pybuda.TTDeviceImage.load_from_disk(path).load_model()
    params = [p for sub, _ in compiled.subgraphs for p in sub.module.get_parameters()]

    def device_state():
        return sum(len(p.consteval) + len(p._device_copies) for p in params)

    restored = device_state()
    assert restored > 0 and any(p.consteval for p in params)
    assert torch.equal(compiled.run(torch.from_numpy(x)), torch.from_numpy(expected))
    assert device_state() == restored, "the first run from an image computed device state the image carries"


def _maps_of(path) -> int:
    target = str(Path(path).resolve())
    return sum(target in line for line in Path("/proc/self/maps").read_text().splitlines())


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
@pytest.mark.parametrize("map_file", [True, False])
def test_dropping_a_loaded_image_unmaps_its_file(saved, map_file):
    """The tensors are views of the mapped file: the mapping lives exactly as long as they do."""
    import gc

    path, x, expected, _ = saved["bert"]
    gc.collect()
    before = _maps_of(path)                   # (the image compile_to_image returned may still be alive)
    img = pybuda.TTDeviceImage.load_from_disk(path, map_file=map_file)
    compiled = img.load_model()
    assert torch.equal(compiled.run(torch.from_numpy(x)), torch.from_numpy(expected))
    assert _maps_of(path) - before == (1 if map_file else 0)
    del img, compiled
    gc.collect()
    assert _maps_of(path) == before
