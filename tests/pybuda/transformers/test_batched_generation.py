"""Batched prompts of different lengths (left padding) through transformers' generate with the forward on
the device: token for token what eager generate gives at Float32/HiFi4. The device forward used to hide the
model's signature, so generate never built position_ids from the attention mask and GPT-2's padded row
went wrong from its first token."""

import copy

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

import pybuda
from pybuda.transformers.pipeline import run_forward_on_device

NEW_TOKENS = 16


def _gpt2():
    return GPT2LMHeadModel(GPT2Config(vocab_size=512, n_positions=64, n_embd=64, n_layer=2, n_head=2,
                                      initializer_range=0.2, bos_token_id=0, eos_token_id=None, pad_token_id=0))


def _llama():
    return LlamaForCausalLM(LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                        initializer_range=0.2, bos_token_id=1, eos_token_id=None, pad_token_id=0))


@pytest.mark.parametrize("make", [_gpt2, _llama], ids=["gpt2", "llama"])
def test_left_padded_batch_matches_eager_generate_at_float32_hifi4(make):
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")
    torch.manual_seed(0)
    model = make().eval()
    golden_model = copy.deepcopy(model)
    ids = torch.randint(1, 512, (2, 7))
    mask = torch.ones_like(ids)
    ids[1, :3], mask[1, :3] = 0, 0          # the second prompt is 4 tokens, padded on the left
    with torch.no_grad():
        golden = golden_model.generate(ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False)
    assert len(set(golden[1, 7:].tolist())) >= 6      # a varied sequence, not one repeated token
    run_forward_on_device(model)
    out = model.generate(ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False)
    assert out.tolist() == golden.tolist()
