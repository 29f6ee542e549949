"""pybuda.transformers.pipeline for encoder-decoders, called as PyBuda's T5, Flan-T5 and Whisper demos
call it: text2text-generation, summarization and translation (which transformers 5 dropped) and
automatic-speech-recognition with `pipeline_type=`; offline tokenizers, tiny random models, the
answers compared with the same steps run eagerly on a copy of the model."""

import copy

import pytest
import torch

import pybuda
from pybuda.transformers.pipeline import pipeline as pybuda_pipeline
from tests.tvm_buda.generation.seq2seq_models import (t5, t5_tokenizer, waveform, whisper, whisper_feature_extractor,
                                                      whisper_tokenizer)

TASK_PARAMS = {"summarization": {"prefix": "summarize: ", "max_length": 12, "no_repeat_ngram_size": 2},
               "translation_en_to_de": {"prefix": "translate English to German: ", "max_length": 12}}


def _float32_hifi4():
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")


def _eager_text(model, tokenizer, text: str, **generate_kwargs) -> str:
    """Eager generate's text, for an input whose greedy choices are no near-tie: every step's best logit
    leads the next by >= 0.1 (Float32/HiFi4 moves this T5's logits, of scale ~40, by up to ~0.15)."""
    encoded = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**encoded, output_scores=True, return_dict_in_generate=True, **generate_kwargs)
    tops = [step.topk(2, dim=-1).values[0] for step in out.scores]
    assert min((top[0] - top[1]).item() for top in tops) >= 0.1
    return tokenizer.decode(out.sequences[0], skip_special_tokens=True)


def _demo_t5():
    """T5 configured as PyBuda's demo configures it (return_dict=False, use_cache=False)."""
    tokenizer = t5_tokenizer()
    torch.manual_seed(0)
    model = t5(vocab_size=len(tokenizer), return_dict=False, use_cache=False, task_specific_params=TASK_PARAMS)
    eager = copy.deepcopy(model)
    for module in eager.modules():   # transformers 5 cannot run T5 with return_dict=False (decoder_outputs.cache)
        if getattr(module, "config", None) is not None:
            module.config.return_dict = True
    return model, eager, tokenizer


def test_t5_demo_text2text_then_summarization_and_translation_on_one_model():
    _float32_hifi4()
    model, eager, tokenizer = _demo_t5()
    prefix_text = "translate english to german: the house is wonderful."
    text2text_generator = pybuda_pipeline("text2text-generation", model=model, tokenizer=tokenizer,
                                          pybuda_max_length=32)
    answer = text2text_generator(prefix_text, max_length=5, num_beams=1, num_return_sequences=1,
                                 no_repeat_ngram_size=2)
    expected = _eager_text(eager, tokenizer, prefix_text, max_length=5, no_repeat_ngram_size=2)
    assert answer == [{"generated_text": expected}] and expected

    text = "the sun was warm"
    summarizer = pybuda_pipeline(pipeline_type="summarization", model=model, tokenizer=tokenizer)
    assert summarizer(text) == [{"summary_text": _eager_text(eager, tokenizer, "summarize: " + text,
                                                             max_length=12, no_repeat_ngram_size=2)}]
    translator = pybuda_pipeline("translation_en_to_de", model=model, tokenizer=tokenizer)
    texts = [text, "we went to see our friends"]
    assert translator(texts) == [
        {"translation_text": _eager_text(eager, tokenizer, "translate English to German: " + t, max_length=12)}
        for t in texts]
    # every call ran on the programs the first compiled: batch 1 reused, batch 2 compiled once
    assert sorted({key[:2] for key in model.seq2seq_runner.programs}) == [
        ("encoder", ("input_ids", (1, 32), "torch.int64")), ("encoder", ("input_ids", (2, 32), "torch.int64")),
        ("first", 1), ("first", 2), ("next", 1), ("next", 2)]


def test_t5_text2text_at_default_formats_agrees_on_at_least_14_of_16_tokens():
    model, eager, tokenizer = _demo_t5()
    prompt = "the sun was warm and we went to see our friends in the park"
    settings = dict(max_new_tokens=16, min_new_tokens=16)
    pipe = pybuda_pipeline("text2text-generation", model=model, tokenizer=tokenizer)
    out = pipe(prompt, return_tensors=True, return_text=False, **settings)[0]["generated_token_ids"]
    with torch.no_grad():
        golden = eager.generate(**tokenizer(prompt, return_tensors="pt"), **settings)[0]
    assert len(set(golden[1:].tolist())) >= 3
    assert (out[1:] == golden[1:]).sum().item() >= 14, (out.tolist(), golden.tolist())


def test_whisper_demo_automatic_speech_recognition_on_a_synthetic_waveform():
    """PyBuda's Whisper demo call; the pipeline's default search (5 beams) runs with the device's caches."""
    _float32_hifi4()
    import transformers

    tokenizer, feature_extractor = whisper_tokenizer(), whisper_feature_extractor()
    torch.manual_seed(0)
    model = whisper(vocab_size=len(tokenizer))
    model.generation_config.max_new_tokens = 12   # as a checkpoint's generation_config.json sets its length
    eager = transformers.pipeline("automatic-speech-recognition", model=copy.deepcopy(model), tokenizer=tokenizer,
                                  feature_extractor=feature_extractor)
    sample_audio = waveform()
    expected = eager(sample_audio)

    asr_pipeline = pybuda_pipeline(pipeline_type="automatic-speech-recognition", model=model, tokenizer=tokenizer,
                                   feature_extractor=feature_extractor)
    answer = asr_pipeline(sample_audio)
    assert answer == expected and len(answer["text"]) >= 4
    assert asr_pipeline.model.forward.runs_on_device


def test_task_and_pipeline_type_must_agree():
    model, _, tokenizer = _demo_t5()
    with pytest.raises(ValueError, match="task='summarization' and pipeline_type='translation' disagree"):
        pybuda_pipeline("summarization", model=model, tokenizer=tokenizer, pipeline_type="translation")
    with pytest.raises(ValueError, match="pass the model and tokenizer objects"):
        pybuda_pipeline(pipeline_type="text2text-generation", model="t5-small")
    with pytest.raises(TypeError, match="a string or a non-empty list of strings"):
        pybuda_pipeline("text2text-generation", model=model, tokenizer=tokenizer)(42)
