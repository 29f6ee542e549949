"""Every causal LM architecture the installed transformers has, tiny and random, generating through its own
`generate` with the KV cache on the device (tvm_buda.generation.CachedDecoder): token for token what eager
`generate` gives at Float32/HiFi4, for a batch of two prompts of different lengths (left padding); at the
default formats, at least 14 of 16 tokens for a few. Architectures that cannot take a static cache fall
back with a one-line notice."""

import copy
import warnings

import pytest
import torch

import pybuda
from pybuda.config import _get_global_compiler_config
from tests.tvm_buda.generation.tiny_lms import available, make
from tvm_buda.generation import CachedDecoder

NEW_TOKENS = 16
# transformers marks GPT-Neo and MPT _can_compile_fullgraph=False (GPT-Neo's local attention and MPT's ALiBi
# slicing depend on the cache's run-time length); Falcon's cached step is wrong on the device (support.py)
STATIC_NOT_READY = "transformers does not mark it static-cache ready"
FALLBACK = {"gpt_neo": ("GPTNeoForCausalLM", STATIC_NOT_READY), "mpt": ("MptForCausalLM", STATIC_NOT_READY),
            "falcon": ("FalconForCausalLM", "its multi-query cached step gives wrong logits on the device")}
CACHED = [name for name in available() if name not in FALLBACK]
QUICK = {"llama", "gpt2", "qwen2", "gemma3", "opt"}   # the rest are marked slow (same code path)


MARGIN = 0.05   # the golden's top-two logit gap at every step: a near-tie flips on any numerics


def _prompts_without_near_ties(model):
    """Two prompts (the second 4 tokens, padded on the left to 7) whose greedy continuation by the eager
    model has no near-tie, and that continuation."""
    for seed in range(20):
        ids = torch.randint(3, 250, (2, 7), generator=torch.Generator().manual_seed(seed))
        mask = torch.ones_like(ids)
        ids[1, :3], mask[1, :3] = 0, 0
        with torch.no_grad():
            out = model.generate(ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False,
                                 output_scores=True, return_dict_in_generate=True)
        gaps = torch.stack([s.topk(2).values.diff(dim=-1).abs()[:, 0] for s in out.scores])
        if gaps.min() >= MARGIN:
            return ids, mask, out.sequences
    raise AssertionError("no prompt without a near-tie in 20 seeds")


def _no_fallback(*args, **kwargs):
    raise AssertionError("a generate step left the device cache path")


def _generate_both(name):
    torch.manual_seed(0)
    model = make(name)
    ids, mask, golden = _prompts_without_near_ties(copy.deepcopy(model))
    decoder = CachedDecoder.install(model, fallback=_no_fallback, config=_get_global_compiler_config().copy())
    out = model.generate(ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False)
    return golden, out, decoder


def _params(names):
    return [pytest.param(n, marks=() if n in QUICK else pytest.mark.slow) for n in names]


@pytest.mark.parametrize("name", _params(CACHED))
def test_greedy_batch_matches_eager_generate_at_float32_hifi4(name):
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")
    golden, out, decoder = _generate_both(name)
    assert min(len(set(row.tolist())) for row in golden[:, 7:]) >= 5   # varied sequences, not one repeated token
    assert out.tolist() == golden.tolist()
    assert decoder.steps == NEW_TOKENS      # a prefill, then one decode step per further token
    assert sorted(decoder.programs.compiled) == [(2, 1, 32), (2, 32, 32)]   # compiled once each


@pytest.mark.parametrize("name", ["llama", "gpt2", pytest.param("phi3", marks=pytest.mark.slow)])
def test_greedy_at_default_formats_agrees_on_14_of_16_tokens(name):
    golden, out, decoder = _generate_both(name)
    agree = (out[:, 7:] == golden[:, 7:]).sum(dim=1)
    assert agree.min() >= 14, f"{agree.tolist()} of {NEW_TOKENS} tokens agree"
    for compiled in decoder.programs.compiled.values():   # one device subgraph; the host keeps the lookups
        assert compiled.num_device_subgraphs == 1


@pytest.mark.parametrize("name", sorted(FALLBACK))
def test_architectures_without_a_static_cache_fall_back_with_a_notice(name):
    model = make(name)
    forward = model.forward
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert CachedDecoder.install(model, fallback=_no_fallback) is None
    notices = [str(w.message) for w in caught]
    assert len(notices) == 1 and "\n" not in notices[0]
    model_name, reason = FALLBACK[name]
    assert notices[0].startswith(f"no KV cache on the device for {model_name}: {reason}")
    assert model.forward == forward and "_prepare_cache_for_generation" not in vars(model)
