"""Greedy GPT-2 generation on the simulated device (prefill + decode compiled once each, KV cache
held by the TTDevice) against transformers' own `generate(do_sample=False)`."""

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import pybuda
from tvm_buda.generation import GPT2Generator

NEW_TOKENS = 16


def _model_and_prompt():
    """2 layers, n_embd 64; initializer_range 0.2 so random weights give a varied sequence (at
    GPT-2's 0.02 greedy decoding repeats one token, which would prove little)."""
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=512, n_positions=64, n_embd=64, n_layer=2, n_head=2, initializer_range=0.2,
                        bos_token_id=0, eos_token_id=None, pad_token_id=0)
    model = GPT2LMHeadModel(config).eval()
    prompt = torch.randint(1, 512, (1, 5))
    with torch.no_grad():
        golden = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=NEW_TOKENS,
                                do_sample=False)
    assert len(set(golden[0, 5:].tolist())) >= 8  # the golden itself is not a repetition
    return model, prompt, golden


def test_greedy_generation_matches_transformers_at_float32_hifi4():
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")
    model, prompt, golden = _model_and_prompt()
    generator = GPT2Generator(model, prompt_len=8, cache_len=32)
    compiled = generator.compiled
    out = generator.generate(prompt, NEW_TOKENS)
    assert out.tolist() == golden.tolist()
    assert generator.compiled == compiled and len(compiled) == 2   # nothing compiled while generating
    again = generator.generate(prompt[:, :3], 4)                    # a second prompt reuses both programs
    with torch.no_grad():
        expected = model.generate(prompt[:, :3], attention_mask=torch.ones(1, 3, dtype=torch.int64),
                                  max_new_tokens=4, do_sample=False)
    assert again.tolist() == expected.tolist() and generator.compiled == compiled


def test_greedy_generation_at_default_formats_agrees_on_90_percent_of_tokens():
    model, prompt, golden = _model_and_prompt()
    generator = GPT2Generator(model, prompt_len=8, cache_len=32)
    out = generator.generate(prompt, NEW_TOKENS)
    agreement = (out[0, 5:] == golden[0, 5:]).float().mean().item()
    assert agreement >= 0.9, f"{agreement:.0%} of the tokens agree"
    for compiled in generator.compiled:   # the whole step runs on the device but the embedding lookups
        assert compiled.num_device_subgraphs == 1 and set(compiled.cpu_ops()) <= {"take", "astype", "reshape"}
    assert pybuda.config._get_global_compiler_config().loopback_outputs == {}   # set for the compile only
    eos = golden[0, 8].item()                        # stops at the eos token as transformers does
    model.generation_config.eos_token_id = eos
    with torch.no_grad():
        golden = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=NEW_TOKENS,
                                do_sample=False)
    out = generator.generate(prompt, NEW_TOKENS)
    assert out.shape[1] < 5 + NEW_TOKENS and out[0, -1] == eos and out.tolist() == golden.tolist()
    with pytest.raises(ValueError, match="the prompt has 9 tokens; this generator was compiled for 1 to 8"):
        generator.generate(torch.ones(1, 9, dtype=torch.int64), 2)
    with pytest.raises(ValueError, match="room for 1 to 28 new tokens"):
        generator.generate(prompt, 29)
    with pytest.raises(RuntimeError, match=r"device\(s\) \['tt0'\] already form the pipeline"):
        GPT2Generator(model, prompt_len=8, cache_len=32)


def test_cache_links_never_reach_the_global_config_seen_by_other_threads():
    """The generator's loopback links are its device's own setting: a compile in another thread,
    reading the global CompilerConfig meanwhile, never sees them (it used to, while compiling)."""
    import threading
    import time

    model, _, _ = _model_and_prompt()
    seen, done = set(), threading.Event()

    def watch():
        while not done.is_set():
            seen.update(pybuda.config._get_global_compiler_config().loopback_outputs or {})
            time.sleep(0.005)  # sample, leaving the GIL to the compile

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        generator = GPT2Generator(model, prompt_len=8, cache_len=32)
    finally:
        done.set()
        watcher.join()
    assert seen == set()
    assert all(len(c.config.loopback_outputs) == 4 for c in generator.compiled)   # 2 layers x (key, value)
