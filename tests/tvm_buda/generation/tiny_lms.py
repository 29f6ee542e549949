"""Tiny random-weight causal LMs of every architecture the cached generation path is tested on: 2 layers,
width 64, vocab 256, initializer_range 0.2 (larger than the models' own, so greedy decoding gives a
varied sequence instead of one repeated token)."""

from __future__ import annotations

import transformers

VOCAB = 256
_COMMON = {"vocab_size": VOCAB, "initializer_range": 0.2, "bos_token_id": 1, "eos_token_id": None, "pad_token_id": 0}
_LLAMA_LIKE = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
               "num_key_value_heads": 2, "max_position_embeddings": 128}

# architecture -> (config class, model class, config arguments)
ARCHITECTURES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", _LLAMA_LIKE),
    "mistral": ("MistralConfig", "MistralForCausalLM", {**_LLAMA_LIKE, "sliding_window": 12}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", _LLAMA_LIKE),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {**_LLAMA_LIKE, "head_dim": 16}),
    "phi": ("PhiConfig", "PhiForCausalLM", {**_LLAMA_LIKE, "partial_rotary_factor": 0.5}),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", _LLAMA_LIKE),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", {**_LLAMA_LIKE, "head_dim": 16}),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {**_LLAMA_LIKE, "head_dim": 16, "sliding_window": 12}),
    "gemma3": ("Gemma3TextConfig", "Gemma3ForCausalLM", {**_LLAMA_LIKE, "head_dim": 16, "sliding_window": 12,
                                                           "layer_types": ["sliding_attention", "full_attention"]}),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", {**_LLAMA_LIKE, "rotary_pct": 0.5}),
    "gptj": ("GPTJConfig", "GPTJForCausalLM", {"n_positions": 128, "n_embd": 64, "n_layer": 2, "n_head": 4,
                                               "rotary_dim": 8}),
    "opt": ("OPTConfig", "OPTForCausalLM", {"hidden_size": 64, "ffn_dim": 128, "num_hidden_layers": 2,
                                            "num_attention_heads": 4, "max_position_embeddings": 128,
                                            "word_embed_proj_dim": 64}),
    "bloom": ("BloomConfig", "BloomForCausalLM", {"hidden_size": 64, "n_layer": 2, "n_head": 4}),
    "falcon": ("FalconConfig", "FalconForCausalLM", {"hidden_size": 64, "num_hidden_layers": 2,
                                                     "num_attention_heads": 4, "max_position_embeddings": 128}),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", {"n_positions": 128, "n_embd": 64, "n_layer": 2, "n_head": 4}),
    "gpt_neo": ("GPTNeoConfig", "GPTNeoForCausalLM", {"max_position_embeddings": 128, "hidden_size": 64,
                                                      "num_layers": 2, "num_heads": 4, "window_size": 12,
                                                      "attention_types": [[["global", "local"], 1]]}),
    "codegen": ("CodeGenConfig", "CodeGenForCausalLM", {"n_positions": 128, "n_ctx": 128, "n_embd": 64,
                                                        "n_layer": 2, "n_head": 4, "rotary_dim": 8}),
    "stablelm": ("StableLmConfig", "StableLmForCausalLM", _LLAMA_LIKE),
    "starcoder2": ("Starcoder2Config", "Starcoder2ForCausalLM", {**_LLAMA_LIKE, "sliding_window": 12}),
    "olmo": ("OlmoConfig", "OlmoForCausalLM", _LLAMA_LIKE),
    "mpt": ("MptConfig", "MptForCausalLM", {"d_model": 64, "n_heads": 4, "n_layers": 2, "expansion_ratio": 2,
                                            "max_seq_len": 128}),
}


def available() -> list[str]:
    """The architectures above that the installed transformers has."""
    return [name for name, (config, model, _) in ARCHITECTURES.items()
            if hasattr(transformers, config) and hasattr(transformers, model)]


def make(name: str):
    """The tiny model of architecture `name`, in eval mode (seed torch first for repeatable weights)."""
    config_name, model_name, arguments = ARCHITECTURES[name]
    config = getattr(transformers, config_name)(**_COMMON, **arguments)
    return getattr(transformers, model_name)(config).eval()


PROMPT = 7          # the batch's longest prompt; the second row is 4 tokens, padded on the left


def no_fallback(*args, **kwargs):
    raise AssertionError("a generate step left the device cache path")


def generate_both(name: str, new_tokens: int):
    """(eager's generate output, the device's, the decoder) for two prompts, the second 4 tokens padded on
    the left to PROMPT; both with the raw logits of every step."""
    import copy

    import torch

    from pybuda.config import _get_global_compiler_config
    from tvm_buda.generation import CachedDecoder

    torch.manual_seed(0)
    model = make(name)
    golden_model = copy.deepcopy(model)
    ids = torch.randint(3, 250, (2, PROMPT), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    ids[1, :3], mask[1, :3] = 0, 0
    kwargs = dict(attention_mask=mask, max_new_tokens=new_tokens, do_sample=False, output_logits=True,
                  return_dict_in_generate=True)
    with torch.no_grad():
        golden = golden_model.generate(ids, **kwargs)
    decoder = CachedDecoder.install(model, fallback=no_fallback, config=_get_global_compiler_config().copy())
    return golden, model.generate(ids, **kwargs), decoder
