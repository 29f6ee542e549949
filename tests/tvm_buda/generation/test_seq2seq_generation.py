"""Encoder-decoders generating on the device (tvm_buda.generation.seq2seq) through transformers' own
generate: encoder once, decoder steps against self- and cross-attention caches the device keeps,
compared token for token with eager `generate` on a copy of the model."""

import copy

import pytest
import torch

import pybuda
from tests.tvm_buda.generation.seq2seq_models import FAMILIES, SEEDS, batch_of_two, bart
from tvm_buda.generation.seq2seq import on_device

NEW_TOKENS = 16
MARGIN = 0.04   # Float32/HiFi4 moves these models' logits by up to ~0.04 (HiFi4: 10/14-bit significands)


def _float32_hifi4():
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")


def _eager(model, inputs, **kwargs):
    with torch.no_grad():
        return model.generate(**inputs, **kwargs)


def _smallest_margin(model, inputs, **kwargs) -> float:
    """The smallest gap between the best and second-best logit over eager greedy's steps and rows."""
    with torch.no_grad():
        scores = model.generate(**inputs, output_scores=True, return_dict_in_generate=True, **kwargs).scores
    return min((top.values[:, 0] - top.values[:, 1]).min().item() for top in (s.topk(2, dim=-1) for s in scores))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_greedy_batch_of_two_matches_eager_generate_at_float32_hifi4(family):
    """Two prompts of 9 and 6 tokens (right padding, masked; Whisper: two spectrograms), inputs without a
    near-tie in eager's greedy choices (a tie within HiFi4's error is no test of the device)."""
    _float32_hifi4()
    torch.manual_seed(0)
    model = FAMILIES[family]()
    eager = copy.deepcopy(model)
    inputs = batch_of_two(model, seed=SEEDS[family])
    settings = dict(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False)
    golden = _eager(eager, inputs, **settings)
    assert all(len(set(row[-NEW_TOKENS:].tolist())) >= 4 for row in golden)   # a varied sequence
    assert _smallest_margin(eager, inputs, **settings) >= MARGIN
    on_device(model)
    out = model.generate(**inputs, **settings)
    assert out.tolist() == golden.tolist()
    programs = model.seq2seq_runner.programs
    assert [key[0] for key in programs] == ["encoder", "first", "next"]   # one each, every step after the first
    for key, compiled in programs.items():                                 # the decoder steps whole on the device
        if key[0] != "encoder":
            assert compiled.num_device_subgraphs == 1 and "matmul" in compiled.device_ops()


def test_sampling_with_a_seed_and_beam_search_match_eager_at_float32_hifi4():
    """T5, batch of two: seeded sampling (top-k 20, temperature 10: T5's logits are steep) draws what
    eager draws; beam search (3 beams, 2 returned: the device reorders its caches by transformers' beam
    indices) ends on eager's beams, whose final scores are apart by more than HiFi4's error."""
    _float32_hifi4()
    torch.manual_seed(0)
    model = FAMILIES["t5"]()
    eager = copy.deepcopy(model)
    inputs = batch_of_two(model, seed=SEEDS["t5"])
    sampling = dict(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=True, top_k=20, temperature=10.0)
    torch.manual_seed(7)
    golden = _eager(eager, inputs, **sampling)
    assert all(len(set(row[-NEW_TOKENS:].tolist())) >= 8 for row in golden)
    on_device(model)
    torch.manual_seed(7)
    out = model.generate(**inputs, **sampling)
    agree = (out[:, -NEW_TOKENS:] == golden[:, -NEW_TOKENS:]).sum(dim=1)
    assert agree.min().item() >= 14, (out.tolist(), golden.tolist())
    beams = dict(max_new_tokens=10, num_beams=3, do_sample=False)
    scores = _eager(eager, inputs, num_return_sequences=3, output_scores=True, return_dict_in_generate=True,
                    **beams).sequences_scores.view(2, 3)
    assert (scores[:, :-1] - scores[:, 1:]).min().item() >= 0.05
    golden = _eager(eager, inputs, num_return_sequences=2, **beams)
    out = model.generate(**inputs, num_return_sequences=2, **beams)
    assert out.tolist() == golden.tolist()
    assert sorted(key[:2] for key in model.seq2seq_runner.programs if key[0] != "encoder") == [
        ("first", 2), ("first", 6), ("next", 2), ("next", 6)]


def test_a_sequence_longer_than_the_cache_moves_to_a_longer_one():
    """cache_len=8 (one bucket of 32 positions) and 40 new tokens: the device cache grows to 64 mid-way."""
    _float32_hifi4()
    torch.manual_seed(0)
    model = bart()
    eager = copy.deepcopy(model)
    inputs = {k: v[:1] for k, v in batch_of_two(model, seed=SEEDS["bart"]).items()}
    settings = dict(max_new_tokens=40, min_new_tokens=40, do_sample=False)
    golden = _eager(eager, inputs, **settings)
    assert _smallest_margin(eager, inputs, **settings) >= MARGIN
    on_device(model, cache_len=8)
    assert model.generate(**inputs, **settings).tolist() == golden.tolist()
    assert {key[-1] for key in model.seq2seq_runner.programs if key[0] != "encoder"} == {32, 64}


def test_bad_calls_are_clear_errors():
    model = on_device(bart())
    inputs = batch_of_two(model)
    with pytest.raises(ValueError, match="keeps the decoder's cache itself"):
        model.generate(**inputs, cache=object())
    with pytest.raises(NotImplementedError, match="labels= is not supported"):
        model(**inputs, decoder_input_ids=inputs["input_ids"], labels=inputs["input_ids"])
    with pytest.raises(ValueError, match="not an encoder-decoder"):
        from transformers import GPT2Config, GPT2LMHeadModel

        on_device(GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64)))
    with pytest.raises(ValueError, match="cache_len"):
        on_device(bart(), cache_len=0)
    assert not model.seq2seq_runner.programs   # nothing compiled for any of them
