"""transformers' decoding strategies over the device KV cache path, on one tiny Llama at Float32/HiFi4 whose
programs are compiled once for the module: seeded sampling with every usual knob, beam search (the cache
reordered on the device), right padding, stop strings, eos, a streamer, and calls that reuse the programs."""

import copy

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM, TextStreamer

import pybuda
from pybuda.config import _get_global_compiler_config, _reset_global_compiler_config
from tests.clients.local_tokenizers import byte_level_bpe_tokenizer
from tvm_buda.generation import CachedDecoder

NEW = 16


def _no_fallback(*args, **kwargs):
    raise AssertionError("a generate step left the device cache path")


@pytest.fixture(scope="module")
def lm():
    """(device model, eager golden model, tokenizer, decoder): one tiny Llama over a byte-level BPE tokenizer."""
    tokenizer = byte_level_bpe_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         initializer_range=0.2, bos_token_id=1, eos_token_id=None, pad_token_id=tokenizer.pad_token_id)
    model = LlamaForCausalLM(config).eval()
    golden = copy.deepcopy(model)
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")
    decoder = CachedDecoder.install(model, fallback=_no_fallback, config=_get_global_compiler_config().copy())
    _reset_global_compiler_config()
    return model, golden, tokenizer, decoder


def _prompt(tokenizer, text="the team won the title"):
    inputs = tokenizer(text, return_tensors="pt")
    assert inputs["input_ids"].shape[1] + NEW < 32     # every call fits the same 32-slot programs
    return inputs


def _both(lm, inputs, **kwargs):
    model, golden, _, _ = lm
    with torch.no_grad():
        expected = golden.generate(**inputs, **kwargs)
    return model.generate(**inputs, **kwargs), expected


def test_seeded_sampling_matches_eager_with_the_same_seed(lm):
    knobs = dict(do_sample=True, temperature=0.9, top_k=40, top_p=0.95, repetition_penalty=1.3, max_new_tokens=NEW)
    inputs = _prompt(lm[2])
    n = inputs["input_ids"].shape[1]
    torch.manual_seed(7)
    with torch.no_grad():
        expected = lm[1].generate(**inputs, **knobs)
    torch.manual_seed(7)
    out = lm[0].generate(**inputs, **knobs)
    agree = int((out[0, n:] == expected[0, n:]).sum())
    assert agree >= 14, f"{agree} of {NEW} sampled tokens agree"
    torch.manual_seed(8)
    other = lm[0].generate(**inputs, **knobs)
    assert other[0, n:].tolist() != out[0, n:].tolist()     # the seed, not the model alone, decides


def test_beam_search_reorders_the_device_cache_as_eager_does(lm):
    inputs = _prompt(lm[2])
    out, expected = _both(lm, inputs, num_beams=2, num_return_sequences=2, max_new_tokens=10, do_sample=False)
    assert out.tolist() == expected.tolist()
    assert (2, 1, 32) in lm[3].programs.compiled        # two beams: the batch-2 programs


def test_right_padding_gives_what_eager_gives(lm):
    tokenizer = lm[2]
    tokenizer.padding_side = "right"
    inputs = tokenizer(["the team won the title", "the game"], return_tensors="pt", padding=True)
    tokenizer.padding_side = "left"
    assert inputs["attention_mask"][1, -1] == 0                  # the second prompt is padded on the right
    with torch.no_grad():   # (prompts chosen so that eager's continuation has no near-tie to flip)
        scores = lm[1].generate(**inputs, max_new_tokens=NEW, do_sample=False, output_scores=True,
                                return_dict_in_generate=True).scores
    assert min(float(s.topk(2).values.diff(dim=-1).abs().min()) for s in scores) >= 0.05
    out, expected = _both(lm, inputs, max_new_tokens=NEW, do_sample=False)
    assert out.tolist() == expected.tolist()


def test_stop_strings_and_eos_stop_where_eager_stops(lm):
    model, _, tokenizer, decoder = lm
    inputs = _prompt(tokenizer)
    n = inputs["input_ids"].shape[1]
    full, _ = _both(lm, inputs, max_new_tokens=NEW, do_sample=False)
    # a random model emits byte-level tokens of partial characters (decoded as U+FFFD, which no stop string
    # matches): stop at the first later token that decodes to a word
    texts = [tokenizer.decode(full[0, i:i + 1]).strip() for i in range(n, n + NEW)]
    k = next(i for i in range(3, NEW - 1) if texts[i].isascii() and texts[i].isalnum())
    out, expected = _both(lm, inputs, max_new_tokens=NEW, do_sample=False, stop_strings=[texts[k]],
                          tokenizer=tokenizer)
    assert out.tolist() == expected.tolist() and out.shape[1] <= n + k + 1 < full.shape[1]
    eos = int(full[0, n + 3])
    out, expected = _both(lm, inputs, max_new_tokens=NEW, do_sample=False, eos_token_id=eos)
    assert out.tolist() == expected.tolist() and out[0, -1] == eos and out.shape[1] <= n + 4


def test_streamer_prints_the_generated_text_and_programs_are_reused(lm, capsys):
    model, _, tokenizer, decoder = lm
    inputs = _prompt(tokenizer)
    n = inputs["input_ids"].shape[1]
    capsys.readouterr()
    out = model.generate(**inputs, max_new_tokens=8, do_sample=False, streamer=TextStreamer(tokenizer,
                                                                                            skip_prompt=True))
    printed = capsys.readouterr().out
    assert printed.strip() == tokenizer.decode(out[0, n:]).strip() and printed.strip()
    programs = dict(decoder.programs.compiled)
    model.generate(**_prompt(tokenizer, "the stadium"), max_new_tokens=4, do_sample=False)
    assert decoder.programs.compiled == programs      # the same shapes: nothing compiled again
