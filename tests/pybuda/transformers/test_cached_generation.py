"""pybuda.transformers.pipeline's KV-cache path: greedy batch-1 GPT-2 text generation runs a
prefill and a decode program with a past cache and gives transformers' own text."""

import copy

import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformers import pipeline as hf_pipeline

from pybuda.transformers.pipeline import pipeline
from tests.clients.local_tokenizers import gpt2_style_tokenizer


def _model(tokenizer):
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=48, n_embd=64, n_layer=2, n_head=2,
                        initializer_range=0.2, bos_token_id=tokenizer.eos_token_id,
                        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.eos_token_id)
    return GPT2LMHeadModel(config).eval()


def test_greedy_text_generation_uses_the_kv_cache_and_matches_transformers():
    tokenizer = gpt2_style_tokenizer()
    model = _model(tokenizer)
    golden_model = copy.deepcopy(model)
    prompt = "my name is thomas and my main"
    device = pipeline("text-generation", model=model, tokenizer=tokenizer)
    text = device(prompt, max_new_tokens=10, do_sample=False)[0]["generated_text"]
    golden = hf_pipeline("text-generation", model=golden_model, tokenizer=tokenizer)
    assert text == golden(prompt, max_new_tokens=10, do_sample=False)[0]["generated_text"]
    generate = model.generate
    assert generate.cached_calls == 1 and sorted(generate.programs) == [1, 32]   # decode + one prefill bucket
    assert not model.forward.compiled                                        # no uncached forward ran
    device(prompt + " is", max_new_tokens=4, do_sample=False)                 # same bucket: nothing compiled
    assert generate.cached_calls == 2 and sorted(generate.programs) == [1, 32]
    device(prompt, max_new_tokens=3, do_sample=False, repetition_penalty=1.5)  # a logits processor: no cache
    assert generate.cached_calls == 2 and model.forward.compiled
