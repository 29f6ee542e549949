"""Causal LM architectures, tiny and random, generating through their own `generate` with the KV cache on the
device (tvm_buda.generation.CachedDecoder), a batch of two prompts of different lengths (left padding), against
eager `generate` at Float32/HiFi4: the device's logits agree with eager's at every step (PyBuda's rule), and the
tokens agree token for token up to any step where eager's top two logits are closer than the device's own
difference from eager (a near-tie, which any numerics may flip; the contexts differ after it). A few
architectures by default, every one with --generation-all (conftest.py). At the default formats, at least 14
of 16 tokens. Architectures that cannot take a static cache fall back with a one-line notice."""

import warnings

import pytest
import torch

import pybuda
from tests.tvm_buda.generation.tiny_lms import PROMPT, available, generate_both, make, no_fallback
from tvm_buda.generation import CachedDecoder

NEW_TOKENS = 16
# transformers marks GPT-Neo and MPT _can_compile_fullgraph=False (GPT-Neo's local attention and MPT's ALiBi
# slicing depend on the cache's run-time length)
STATIC_NOT_READY = "transformers does not mark it static-cache ready"
FALLBACK = {"gpt_neo": ("GPTNeoForCausalLM", STATIC_NOT_READY), "mpt": ("MptForCausalLM", STATIC_NOT_READY)}


def _agreeing_steps(golden, out) -> list[int]:
    """Per row, the steps whose tokens agree before the first that differs; every step up to that one must
    have the device's logits close to eager's, and a differing token must be eager's near-tie."""
    agreed = []
    for row in range(golden.sequences.shape[0]):
        for step in range(NEW_TOKENS):
            want, got = golden.logits[step][row], out.logits[step][row]
            error = float((want - got).abs().max())
            pcc = float(torch.corrcoef(torch.stack([want, got]))[0, 1])
            assert error <= 0.1 * float(want.abs().max()) and pcc >= 0.99, \
                f"row {row} step {step}: logits off by {error:.3g} (PCC {pcc:.4f})"
            if int(golden.sequences[row, PROMPT + step]) != int(out.sequences[row, PROMPT + step]):
                top = want.topk(2).values
                margin = float(top[0] - top[1])
                assert margin <= 2 * error, (f"row {row} step {step}: a different token where eager's top two "
                                             f"logits are {margin:.3g} apart (device off by {error:.3g})")
                break
        else:
            step = NEW_TOKENS
        agreed.append(step)
    return agreed


def test_greedy_batch_matches_eager_generate_at_float32_hifi4(cached_arch):
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")
    golden, out, decoder = generate_both(cached_arch, NEW_TOKENS)
    agreed = _agreeing_steps(golden, out)
    assert min(agreed) >= 4, f"tokens agree for only {agreed} of {NEW_TOKENS} steps"
    assert decoder.steps == NEW_TOKENS      # a prefill, then one decode step per further token
    assert sorted(decoder.programs.compiled) == [(2, 1, 32), (2, 32, 32)]   # compiled once each


def test_greedy_at_default_formats_agrees_on_14_of_16_tokens():
    golden, out, decoder = generate_both("llama", NEW_TOKENS)
    agree = (out.sequences[:, PROMPT:] == golden.sequences[:, PROMPT:]).sum(dim=1)
    assert agree.min() >= 14, f"{agree.tolist()} of {NEW_TOKENS} tokens agree"
    for compiled in decoder.programs.compiled.values():   # one device subgraph; the host keeps the lookups
        assert compiled.num_device_subgraphs == 1


@pytest.mark.parametrize("name", [n for n in sorted(FALLBACK) if n in available()])
def test_architectures_without_a_static_cache_fall_back_with_a_notice(name):
    model = make(name)
    forward = model.forward
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert CachedDecoder.install(model, fallback=no_fallback) is None
    notices = [str(w.message) for w in caught]
    assert len(notices) == 1 and "\n" not in notices[0]
    model_name, reason = FALLBACK[name]
    assert notices[0].startswith(f"no KV cache on the device for {model_name}: {reason}")
    assert model.forward == forward and "_prepare_cache_for_generation" not in vars(model)
