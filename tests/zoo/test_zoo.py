"""Real architectures end to end through the public API, at the default formats and with Bfp8_b
weights; each run prints a summary row (device share, graph breaks, PCC, estimated samples/s).

Slow: run with `pytest -m slow tests/zoo` (CI runs it too).
"""

import numpy as np
import pytest

import tvm_buda
from buda_runtime_sim.numerics_config import MixedPrecisionRule
from buda_runtime_sim.verify import compare

from . import zoo_models

pytestmark = pytest.mark.slow

CASES = ["bert_base_encoder", "distilbert", "gpt2_small", "vit", "resnet_cnn", "mobilenet_v2_cnn", "keras_cnn",
         "keras_transformer", "jax_mlp", "jax_attention", "bert_encoder_onnx"]
FORMATS = ["default", "bfp8_b_weights"]


def _config(formats: str) -> tvm_buda.CompilerConfig:
    config = tvm_buda.CompilerConfig()
    if formats == "bfp8_b_weights":
        config.mixed_precision.append(MixedPrecisionRule(name_regex=".*", input_df=tvm_buda.DataFormat.Bfp8_b))
    return config


def _first(outputs):
    if isinstance(outputs, dict):
        return next(iter(outputs.values()))
    return outputs[0] if isinstance(outputs, (tuple, list)) else outputs


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx")


def _build(name, onnx_dir):
    builder = getattr(zoo_models, name)
    return builder(onnx_dir) if name == "bert_encoder_onnx" else builder()


def _run_case(case, formats: str):
    compiled = tvm_buda.compile_model(case.model, case.inputs, config=_config(formats), name=case.name)
    out = _first(compiled.run(*case.inputs))
    result = compare(np.asarray(out), np.asarray(_first(case.golden())))
    summary = compiled.partition_summary()
    estimate = compiled.perf_report("wh_n150")
    print(f"\n[zoo] {case.name:<20} {case.framework:<10} {formats:<15} device ops {100 * summary.device_fraction:5.1f}% "
          f"graph breaks {summary.graph_breaks:>2}  pcc {result.pcc:.5f}  est {estimate.samples_per_second:,.0f} samples/s "
          f"(wh_n150)")
    return compiled, result


@pytest.mark.parametrize("formats", FORMATS)
@pytest.mark.parametrize("name", CASES)
def test_zoo_model_matches_its_framework(name, formats, onnx_dir):
    case = _build(name, onnx_dir)
    compiled, result = _run_case(case, formats)
    assert result.passed, f"{name} ({formats}): {result}"
    assert compiled.partition_summary().device_fraction > 0.5, "most of the model should run on the device"


def test_gpt2_embeddings_stay_on_the_host():
    compiled = tvm_buda.compile_model(*_model_and_inputs(zoo_models.gpt2_small()), name="gpt2_small")
    assert compiled.cpu_ops().count("take") >= 2, "token and position embeddings run on the host"
    assert "matmul" in compiled.device_ops()


def _model_and_inputs(case):
    return case.model, case.inputs


@pytest.mark.parametrize("formats", FORMATS)
def test_minilm_sentence_embeddings_pcc(formats):
    case = zoo_models.minilm_sentence_embeddings()
    compiled, result = _run_case(case, formats)
    if formats == "default":
        assert result.pcc >= 0.99, result
    assert result.passed, result
    assert "take" in compiled.cpu_ops()
