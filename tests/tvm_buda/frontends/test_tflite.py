"""TFLite route: .tflite flatbuffers (here written by TF's converter, batch left dynamic) -> Relax; numpy in and out."""

import warnings

import numpy as np
import pytest

import pybuda
import tvm_buda
from tvm_buda.frontends.errors import MalformedModelFile
from tvm_buda.modules import TFLiteModule

from . import keras_models
from .checks import assert_outputs_match


@pytest.fixture(scope="module")
def tflite_file(tf, tmp_path_factory):
    """Keras model -> .tflite with TF's own converter (dynamic batch, a serving signature), one file per kind."""
    directory = tmp_path_factory.mktemp("tflite")
    paths = {}

    def get(kind):
        if kind not in paths:
            paths[kind] = directory / f"{kind}.tflite"
            paths[kind].write_bytes(_convert(tf, kind, directory))
        return paths[kind]

    return get


def _convert(tf, kind, directory):
    if kind in keras_models.BUILDERS:
        return tf.lite.TFLiteConverter.from_keras_model(keras_models.BUILDERS[kind]()).convert()
    keras_models.two_in_three_out().export(str(directory / kind), verbose=False)  # dict inputs: via SavedModel
    return tf.lite.TFLiteConverter.from_saved_model(str(directory / kind)).convert()


def interpreter_outputs(tf, path, inputs):
    """The TFLite interpreter's answer, outputs in the file's order (the golden)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "tf.lite.Interpreter is deprecated"
        interpreter = tf.lite.Interpreter(model_path=str(path))
    details = interpreter.get_input_details()
    for detail, value in zip(details, inputs):
        interpreter.resize_tensor_input(detail["index"], value.shape)
    interpreter.allocate_tensors()
    for detail, value in zip(details, inputs):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


@pytest.mark.parametrize("kind", ["mlp", "cnn", "block", "emb_cumsum"])
def test_tflite_file_matches_the_interpreter(tf, tflite_file, kind):
    path = tflite_file(kind)
    compiled = tvm_buda.compile_model(TFLiteModule(kind, path), (keras_models.sample(kind),))
    x = keras_models.sample(kind, seed=1)
    out = compiled.run(x)
    assert isinstance(out, np.ndarray)
    (golden,) = interpreter_outputs(tf, path, [x])
    assert_outputs_match(out, golden, kind)


def test_named_inputs_and_several_outputs(tf, tflite_file):
    path = tflite_file("two_in_three_out")
    rng = np.random.default_rng(0)
    inputs = {"zeta": rng.standard_normal((3, 16), np.float32), "alpha": rng.standard_normal((3, 8), np.float32)}
    compiled = tvm_buda.compile_model(str(path), inputs)
    names = [s.name for s in compiled.imported.inputs]
    assert sorted(names) == ["alpha", "zeta"]  # the file's signature names, not 'serving_default_zeta:0'
    out = compiled.run(**inputs)
    assert isinstance(out, tuple) and len(out) == 3
    assert_outputs_match(out, tuple(interpreter_outputs(tf, path, [inputs[n] for n in names])))
    assert_outputs_match(compiled.run(inputs), out)


def test_file_shapes_are_used_without_samples(tf, tflite_file):
    path = tflite_file("mlp")
    compiled = tvm_buda.compile_model(str(path), ())
    assert compiled.imported.inputs[0].shape == (1, 16)  # the batch the file stores for its dynamic dim
    x = keras_models.sample("mlp", batch=1)
    assert_outputs_match(compiled.run(x), interpreter_outputs(tf, path, [x])[0])


def test_tflite_module_on_tt_and_cpu_devices(tf, tflite_file):
    path = tflite_file("mlp")
    x = keras_models.sample("mlp")
    pybuda.TTDevice("tt0", module=TFLiteModule("mlp_tt", path))
    on_device = pybuda.run_inference(inputs=[(x,)]).get()[0].to_framework("numpy")
    pybuda.shutdown()
    pybuda.CPUDevice("cpu0", module=TFLiteModule("mlp_cpu", path))
    on_host = pybuda.run_inference(inputs=[(x,)]).get()[0].to_framework("numpy")
    assert_outputs_match(on_device, on_host)


def test_malformed_tflite_file_names_the_file(tmp_path):
    path = tmp_path / "broken.tflite"
    path.write_bytes(b"\x10\x00\x00\x00ONNXnot a flatbuffer at all")
    with pytest.raises(MalformedModelFile, match=r"broken\.tflite: not a TFLite flatbuffer"):
        tvm_buda.compile_model(TFLiteModule("broken", path), (np.ones((1, 4), np.float32),))
    with pytest.raises(MalformedModelFile, match=r"missing\.tflite: no such TFLite file"):
        tvm_buda.compile_model(str(tmp_path / "missing.tflite"), ())
