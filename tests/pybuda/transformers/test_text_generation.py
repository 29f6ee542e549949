"""pybuda.transformers.pipeline("text-generation"): greedy unless the call asks to sample, the KV cache on the
device for a causal LM that can take a static cache, the full sequence per token (after a one-line notice)
for one that cannot; the same text as transformers' own pipeline either way."""

import copy

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, GPTNeoConfig, GPTNeoForCausalLM
from transformers import pipeline as hf_pipeline

from pybuda.transformers.pipeline import pipeline
from tests.clients.local_tokenizers import gpt2_style_tokenizer

PROMPT = "my name is thomas and my main"


def _common(tokenizer):
    return dict(vocab_size=len(tokenizer), initializer_range=0.2, bos_token_id=tokenizer.eos_token_id,
                eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.eos_token_id)


def test_a_call_without_do_sample_is_greedy_with_the_kv_cache_on_the_device():
    tokenizer = gpt2_style_tokenizer()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_positions=48, n_embd=64, n_layer=2, n_head=2, **_common(tokenizer))).eval()
    golden = hf_pipeline("text-generation", model=copy.deepcopy(model), tokenizer=tokenizer)
    device = pipeline("text-generation", model=model, tokenizer=tokenizer)
    text = device(PROMPT, max_new_tokens=10)[0]["generated_text"]
    assert text == golden(PROMPT, max_new_tokens=10, do_sample=False)[0]["generated_text"]
    torch.manual_seed(1)   # transformers' own pipeline samples by default: a different text
    assert golden(PROMPT, max_new_tokens=10)[0]["generated_text"] != text
    forward = model.forward
    assert forward.decoder.steps == 10 and not forward.fallback.compiled   # every step on the cached path


def test_an_architecture_without_a_static_cache_falls_back_with_a_notice():
    tokenizer = gpt2_style_tokenizer()
    torch.manual_seed(0)
    model = GPTNeoForCausalLM(GPTNeoConfig(max_position_embeddings=32, hidden_size=64, num_layers=2, num_heads=2,
                                           attention_types=[[["global", "local"], 1]], window_size=8,
                                           **_common(tokenizer))).eval()
    golden = hf_pipeline("text-generation", model=copy.deepcopy(model), tokenizer=tokenizer)
    with pytest.warns(UserWarning, match=r"no KV cache on the device for GPTNeoForCausalLM: transformers does not "
                                         r"mark it static-cache ready"):
        device = pipeline("text-generation", model=model, tokenizer=tokenizer)
    text = device(PROMPT, max_new_tokens=6)[0]["generated_text"]
    assert text == golden(PROMPT, max_new_tokens=6, do_sample=False)[0]["generated_text"]
    assert len(model.forward.compiled) == 1      # the padded whole sequence, one compiled length
