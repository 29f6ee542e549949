"""pybuda.transformers.pipeline: transformers pipelines whose model runs on the simulated device."""

import pytest

import pybuda
from tests.clients.bert_question_answering_pipeline import run_bert_question_answering_pipeline
from tests.clients.gpt2_text_generation import run_gpt2_text_generation


def test_gpt2_text_generation_runs_every_step_on_one_compiled_model():
    answer, device, golden, compiled_for_generation = run_gpt2_text_generation()
    assert len(answer) == 2
    assert all(a["generated_text"].startswith("my name is thomas and my main") for a in answer)
    assert compiled_for_generation == 1  # every step padded to one length
    pybuda.verify.verify_outputs(device, golden, name="gpt2 logits")


def test_bert_question_answering_pipeline():
    answer, device, golden, forward = run_bert_question_answering_pipeline()
    assert set(answer) == {"answer", "score", "start", "end"} and 0 < answer["score"] <= 1
    assert answer["answer"] and answer["answer"] in "the denver broncos won the super bowl title at the stadium in the bay area"
    assert forward.runs_on_device and forward.compiled
    pybuda.verify.verify_outputs(device, golden, name="bert qa logits")


def test_a_sequence_longer_than_the_padding_is_a_clear_error():
    from pybuda.transformers.pipeline import _pad_sequence
    import torch

    with pytest.raises(ValueError, match="longer than the padded length 8; pass pad_to="):
        _pad_sequence({"input_ids": torch.zeros(1, 9, dtype=torch.int64)}, 9, 8)
