"""TensorFlow route (TF graph -> TFLite -> Relax): Keras models, tf.Module, tf.function, SavedModel, GraphDef."""

import numpy as np
import pytest

import pybuda
import tvm_buda
from tvm_buda.frontends.errors import MalformedModelFile, ModelImportError
from tvm_buda.modules import TFGraphDefModule, TFModule

from . import keras_models
from .checks import assert_outputs_match


@pytest.fixture(scope="module")
def keras_model(tf):
    """One Keras model per kind for the whole module (building them costs TF start-up time)."""
    cache = {}

    def get(kind):
        if kind not in cache:
            cache[kind] = keras_models.BUILDERS[kind]() if kind in keras_models.BUILDERS else \
                getattr(keras_models, kind)()
        return cache[kind]

    return get


@pytest.mark.parametrize("kind", ["mlp", "cnn", "block", "emb_cumsum"])
def test_keras_model_matches_tensorflow(tf, keras_model, kind):
    model = keras_model(kind)
    compiled = tvm_buda.compile_model(TFModule(kind, model), (keras_models.sample(kind),))
    x = tf.constant(keras_models.sample(kind, seed=1))
    out = compiled.run(x)
    assert isinstance(out, tf.Tensor)
    assert_outputs_match(out, model(x, training=False), kind)


def test_dict_inputs_and_dict_outputs(tf, keras_model):
    model = keras_model("two_in_three_out")
    rng = np.random.default_rng(0)
    inputs = {"zeta": rng.standard_normal((4, 16), np.float32), "alpha": rng.standard_normal((4, 8), np.float32)}
    compiled = tvm_buda.compile_model(TFModule("two", model), inputs)
    golden = model(inputs, training=False)
    out = compiled.run(inputs)
    assert list(out) == ["sum", "head", "scaled"] and all(isinstance(v, tf.Tensor) for v in out.values())
    assert_outputs_match(out, golden)
    assert_outputs_match(compiled.run(alpha=inputs["alpha"], zeta=inputs["zeta"]), golden)


def test_tf_module_with_tuple_outputs(tf):
    class Scorer(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(tf.random.stateless_normal((16, 8), seed=(1, 2)))

        @tf.function
        def __call__(self, x, bias):
            h = tf.matmul(x, self.w) + bias
            return tf.nn.softmax(h), tf.nn.relu(h), tf.reduce_sum(h, axis=-1)

    module = Scorer()
    x, bias = np.ones((2, 16), np.float32), np.linspace(-1, 1, 8, dtype=np.float32)
    compiled = tvm_buda.compile_model(TFModule("scorer", module), (x, bias))
    assert [s.name for s in compiled.imported.inputs] == ["x", "bias"]
    out = compiled.run(x, bias=bias)
    assert isinstance(out, tuple) and len(out) == 3
    assert_outputs_match(out, module(x, bias))


def test_plain_tf_function(tf):
    @tf.function
    def layer_norm_gelu(x):
        mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
        return tf.nn.gelu((x - mean) * tf.math.rsqrt(var + 1e-5), approximate=False)

    x = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
    compiled = tvm_buda.compile_model(TFModule("ln_gelu", layer_norm_gelu), (x,))
    assert "nn.gelu" in compiled.device_ops() + compiled.cpu_ops()
    assert_outputs_match(compiled.run(x), layer_norm_gelu(x))


def test_saved_model_directory(tf, keras_model, tmp_path):
    model = keras_model("mlp")
    model.export(str(tmp_path / "mlp_saved"), verbose=False)
    x = keras_models.sample("mlp")
    compiled = tvm_buda.compile_model(str(tmp_path / "mlp_saved"), (x,))
    out = compiled.run(x)
    assert isinstance(out, dict) and len(out) == 1  # a serving signature returns a dict
    assert_outputs_match(next(iter(out.values())), model(x, training=False))


def test_graph_def(tf, keras_model):
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    model = keras_model("mlp")
    concrete = tf.function(lambda x: model(x, training=False)).get_concrete_function(
        tf.TensorSpec((None, 16), tf.float32, name="x"))
    frozen = convert_variables_to_constants_v2(concrete)
    graph_def = frozen.graph.as_graph_def()
    output = frozen.outputs[0].name
    wrapper = TFGraphDefModule("mlp_graph", graph_def, [output])
    x = keras_models.sample("mlp", batch=3)
    compiled = tvm_buda.compile_model(wrapper, (x,))
    out = compiled.run(x)
    assert isinstance(out, tf.Tensor)
    assert_outputs_match(out, model(x, training=False))
    assert_outputs_match(out, wrapper.cpu_eval(x))


def test_float64_samples_are_a_clear_error(keras_model):
    with pytest.raises(TypeError, match=r"mlp: input 'x' is float64, but the TFLite route compiles float32 models"):
        tvm_buda.compile_model(TFModule("mlp", keras_model("mlp")), (np.ones((2, 16)),))


def test_dynamic_batch_is_fixed_from_the_sample(keras_model):
    # an unwrapped Keras model is recognised as TensorFlow too
    compiled = tvm_buda.compile_model(keras_model("mlp"), (keras_models.sample("mlp", batch=2),))
    assert compiled.framework == "tensorflow"
    assert compiled.imported.inputs[0].shape == (2, 16)
    with pytest.raises(ValueError, match=r"input 'x' has shape \(3, 16\), but the model was compiled for \(2, 16\)"):
        compiled.run(keras_models.sample("mlp", batch=3))


def test_tf_module_on_tt_device_through_run_inference(tf, keras_model):
    model = keras_model("mlp")
    x = keras_models.sample("mlp")
    pybuda.TTDevice("tt0", module=TFModule("mlp_tt", model))
    outputs = pybuda.run_inference(inputs=[(x,)]).get()
    assert_outputs_match(outputs[0].to_framework("tensorflow"), model(x, training=False))


def test_malformed_saved_model_names_the_directory(tf, tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "saved_model.pb").write_bytes(b"\x00garbage")
    with pytest.raises(MalformedModelFile, match=r"broken: TensorFlow could not load this SavedModel"):
        tvm_buda.compile_model(str(tmp_path / "broken"), (np.ones((1, 4), np.float32),))
    with pytest.raises(MalformedModelFile, match=r"not a SavedModel directory"):
        tvm_buda.compile_model(str(tmp_path), (np.ones((1, 4), np.float32),))


def test_op_without_tflite_builtin_names_op_framework_and_route(tf):
    erfc = tf.function(lambda x: tf.math.erfc(x))
    with pytest.raises(ModelImportError, match=r"TensorFlow model 'erfc'.*TFLiteConverter.*tf\.Erfc") as info:
        tvm_buda.compile_model(TFModule("erfc", erfc), (np.ones((2, 2), np.float32),))
    assert info.value.ops == ["tf.Erfc"]
