"""Every client script in this folder runs unchanged and matches its framework under PyBuda's rule.

The scripts are written like Tenstorrent's public PyBuda demos (same calls, config lines and
environment variables), with random weights and synthetic or locally tokenized inputs.
"""

import importlib
import os

import pytest

import pybuda
from buda_runtime_sim.runtime.devices import registered_devices

SCRIPTS = {
    "pytorch_bert_question_answering": "run_bert_question_answering",
    "pytorch_roberta_masked_lm": "run_roberta_masked_lm",
    "pytorch_albert_sequence_classification": "run_albert_sequence_classification",
    "pytorch_distilbert_token_classification": "run_distilbert_token_classification",
    "pytorch_dpr_question_encoder": "run_dpr_question_encoder",
    "pytorch_opt_causal_lm": "run_opt_causal_lm",
    "pytorch_opt_sequence_classification": "run_opt_sequence_classification",
    "pytorch_opt_question_answering": "run_opt_question_answering",
    "pytorch_t5_encoder": "run_t5_encoder",
    "pytorch_gpt2_causal_lm": "run_gpt2_causal_lm",
    "pytorch_gptneo_sequence_classification": "run_gptneo_sequence_classification",
    "pytorch_whisper_encoder": "run_whisper_encoder",
    "pytorch_clip_text": "run_clip_text",
    "pytorch_vit_image_classification": "run_vit_image_classification",
    "pytorch_beit_image_classification": "run_beit_image_classification",
    "pytorch_resnet_style": "run_resnet_style",
    "pytorch_mobilenet_v2_style": "run_mobilenet_v2_style",
    "pytorch_unet_block": "run_unet_block",
}
SLOW = {"pytorch_unet_block", "pytorch_mobilenet_v2_style", "pytorch_gptneo_sequence_classification",
        "pytorch_t5_encoder"}  # the heaviest compiles


MIN_DEVICE_SHARE = 0.5


@pytest.fixture
def restore_environ():
    """Scripts set PyBuda environment variables the way the demos do; undo that afterwards."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s for s in SCRIPTS])
def test_client_script_matches_framework(script, restore_environ):
    run = getattr(importlib.import_module(f"tests.clients.{script}"), SCRIPTS[script])
    outputs, golden = run()
    results = pybuda.verify.verify_outputs(outputs, golden, name=script)
    assert results and all(r.passed for r in results)
    # the comparison means something only if the device did the work: most ops ran there
    compiled = [c for d in registered_devices() for c in getattr(d, "compiled", {}).values()]
    assert compiled, f"{script}: nothing was compiled for a TTDevice"
    for model in compiled:
        share = model.partition_summary().device_fraction
        print(f"{script}: {100 * share:.0f}% of ops on the device")
        assert share >= MIN_DEVICE_SHARE, f"{script}: only {100 * share:.0f}% of ops ran on the device"
