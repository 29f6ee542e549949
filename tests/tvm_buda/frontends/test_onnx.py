"""ONNX route: ModelProto or .onnx file -> Relax (weights as named params); numpy in and out, onnxruntime as golden."""

import io
import warnings

import numpy as np
import pytest
import torch

import pybuda
import tvm_buda
from tvm_buda.frontends.errors import MalformedModelFile, ModelImportError
from tvm_buda.modules import OnnxModule

from .checks import assert_outputs_match
from .torch_models import build, sample

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
INPUT_NAMES = {"mlp": "x", "cnn": "image", "block": "tokens", "emb_cumsum": "ids"}


@pytest.fixture(scope="module")
def onnx_model():
    """The PyTorch test models exported with the TorchScript ONNX exporter (fast), batch left dynamic."""
    cache = {}

    def get(kind):
        if kind not in cache:
            buffer = io.BytesIO()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(build(kind), (sample(kind),), buffer, dynamo=False, opset_version=17,
                                  input_names=[INPUT_NAMES[kind]], output_names=["y"],
                                  dynamic_axes={INPUT_NAMES[kind]: {0: "batch"}, "y": {0: "batch"}})
            cache[kind] = onnx.load_from_string(buffer.getvalue())
        return cache[kind]

    return get


def onnxruntime_outputs(model, feeds: dict) -> list:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize("kind", ["mlp", "cnn", "block", "emb_cumsum"])
def test_model_matches_onnxruntime(onnx_model, kind):
    model = onnx_model(kind)
    compiled = tvm_buda.compile_model(OnnxModule(kind, model), (sample(kind).numpy(),))
    x = sample(kind, seed=1).numpy()
    out = compiled.run(x)
    assert isinstance(out, np.ndarray)
    (golden,) = onnxruntime_outputs(model, {INPUT_NAMES[kind]: x})
    assert_outputs_match(out, golden, kind)
    assert compiled.imported.params, "weights should be named parameters, not constants"


def two_inputs_three_outputs():
    """Built with onnx.helper (ir_version 10, which onnxruntime accepts)."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["sum"]),
         helper.make_node("Relu", ["sum"], ["relu"]), helper.make_node("Softmax", ["sum"], ["probs"], axis=-1)],
        "two_in_three_out",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 16]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", 8])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["n", 8]) for n in ("probs", "sum", "relu")],
        [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    return model


def test_named_inputs_and_several_outputs(tmp_path):
    model = two_inputs_three_outputs()
    onnx.save(model, str(tmp_path / "two.onnx"))
    rng = np.random.default_rng(1)
    feeds = {"a": rng.standard_normal((3, 16), np.float32), "b": rng.standard_normal((3, 8), np.float32)}
    compiled = tvm_buda.compile_model(str(tmp_path / "two.onnx"), feeds)
    assert compiled.name == "two" and compiled.imported.output_names == ["probs", "sum", "relu"]
    golden = tuple(onnxruntime_outputs(model, feeds))
    assert_outputs_match(compiled.run(b=feeds["b"], a=feeds["a"]), golden)
    assert_outputs_match(compiled.run(feeds["a"], feeds["b"]), golden)


def test_dynamic_batch_is_fixed_from_the_sample(onnx_model):
    compiled = tvm_buda.compile_model(onnx_model("mlp"), (sample("mlp", batch=3).numpy(),), name="mlp")
    assert compiled.imported.inputs[0].shape == (3, 64)
    with pytest.raises(ValueError, match=r"input 'x' has shape \(2, 64\), but the model was compiled for \(3, 64\)"):
        compiled.run(sample("mlp", batch=2).numpy())


def test_unknown_dims_without_samples_are_a_clear_error(onnx_model):
    with pytest.raises(ValueError, match=r"ONNX input 'x' has unknown dims \(None, 64\); pass a sample input"):
        tvm_buda.compile_model(onnx_model("mlp"), (), name="mlp")


def test_onnx_module_on_tt_and_cpu_devices(onnx_model, tmp_path):
    onnx.save(onnx_model("mlp"), str(tmp_path / "mlp.onnx"))
    x = sample("mlp").numpy()
    pybuda.TTDevice("tt0", module=OnnxModule("mlp", None, onnx_path=str(tmp_path / "mlp.onnx")))
    on_device = pybuda.run_inference(inputs=[(x,)]).get()[0].to_framework("numpy")
    pybuda.shutdown()
    pybuda.CPUDevice("cpu0", module=OnnxModule("mlp_cpu", onnx_model("mlp")))
    on_host = pybuda.run_inference(inputs=[(x,)]).get()[0].to_framework("numpy")
    assert_outputs_match(on_device, on_host)


def test_malformed_onnx_file_names_the_file(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\xff\xfe definitely not protobuf")
    with pytest.raises(MalformedModelFile, match=r"broken\.onnx: not a valid ONNX protobuf"):
        tvm_buda.compile_model(str(path), (np.ones((1, 4), np.float32),))


def test_unsupported_op_names_op_framework_and_route():
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"])], "det",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ModelImportError, match=r"ONNX model 'det'.*from_onnx.*unsupported op\(s\) Det") as info:
        tvm_buda.compile_model(OnnxModule("det", model), (np.eye(3, dtype=np.float32),))
    assert info.value.ops == ["Det"]


def test_initializers_listed_as_inputs_stay_weights():
    """Older exporters and the model zoo list every initializer among the graph inputs too: such a
    model compiles (it used to fail with "Variable ... was used before its definition"), takes only
    its runtime input, and matches onnxruntime."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weight = rng.standard_normal((8, 10)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["0", "1", "2"], ["3"], transB=1)], "linear",
        [helper.make_tensor_value_info("0", TensorProto.FLOAT, [3, 10]),
         helper.make_tensor_value_info("1", TensorProto.FLOAT, [8, 10]),
         helper.make_tensor_value_info("2", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("3", TensorProto.FLOAT, [3, 8])],
        [numpy_helper.from_array(weight, "1"), numpy_helper.from_array(bias, "2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)
    x = rng.standard_normal((3, 10)).astype(np.float32)
    compiled = tvm_buda.compile_model(OnnxModule("linear", model), (x,))
    assert [s.name for s in compiled.imported.inputs] == ["0"]
    assert sorted(compiled.imported.params) == ["1", "2"]
    assert_outputs_match(compiled.run(x), x @ weight.T + bias, "linear")
    assert len(model.graph.input) == 3, "the caller's model is left as it was"
