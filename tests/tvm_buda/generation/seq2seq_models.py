"""Tiny random encoder-decoders of each family, their inputs and offline tokenizers (nothing downloaded).

One encoder and one decoder layer, d_model 32: each compiles in seconds. Weights are drawn larger
than the families' defaults (init_std 0.4, T5's initializer_factor 4-16) so that greedy decoding of
a random network gives a varied sequence rather than one repeated token.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

VOCAB = 96
WORDS = ("the a house is wonderful cat sat on mat dog ran in park sun was warm day we went to see our friends "
         "translate english german summarize das haus ist wunderbar die katze sass auf der matte").split()
WHISPER_SPECIALS = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|translate|>",
                    "<|notimestamps|>"]


def t5(flan: bool = False, **overrides):
    """T5 (relu, tied embeddings) or Flan-T5 (gated-gelu, untied), 1 + 1 layers."""
    from transformers import T5Config, T5ForConditionalGeneration

    extra = dict(feed_forward_proj="gated-gelu", tie_word_embeddings=False) if flan else {}
    settings = dict(vocab_size=VOCAB, d_model=32, d_kv=16, d_ff=64, num_layers=1, num_heads=2,
                    relative_attention_num_buckets=8, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
                    initializer_factor=16.0 if flan else 4.0, **extra)
    config = T5Config(**{**settings, **overrides})
    return T5ForConditionalGeneration(config).eval()


def _bart_like(model_class, config_class, **overrides):
    settings = dict(vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                    decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                    init_std=0.4, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    return model_class(config_class(**{**settings, **overrides})).eval()


def bart(**overrides):
    from transformers import BartConfig, BartForConditionalGeneration

    return _bart_like(BartForConditionalGeneration, BartConfig, forced_bos_token_id=None, forced_eos_token_id=None,
                      **overrides)


def mbart(**overrides):
    from transformers import MBartConfig, MBartForConditionalGeneration

    return _bart_like(MBartForConditionalGeneration, MBartConfig, **overrides)


def pegasus(**overrides):
    from transformers import PegasusConfig, PegasusForConditionalGeneration

    return _bart_like(PegasusForConditionalGeneration, PegasusConfig, pad_token_id=0, eos_token_id=1,
                      decoder_start_token_id=0, **overrides)


def marian(**overrides):
    from transformers import MarianConfig, MarianMTModel

    return _bart_like(MarianMTModel, MarianConfig, pad_token_id=VOCAB - 1, eos_token_id=0,
                      decoder_start_token_id=VOCAB - 1, **overrides)


def whisper(vocab_size: int = VOCAB, **overrides):
    """16 mel bins, 64 frames (max_source_positions 32), decoder positions 48; the last ids of the
    vocabulary are its special tokens (whisper_tokenizer's order)."""
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    first_special = vocab_size - len(WHISPER_SPECIALS)
    eos, start, notimestamps = first_special, first_special + 1, first_special + 5
    settings = dict(vocab_size=vocab_size, num_mel_bins=16, encoder_layers=1, encoder_attention_heads=2,
                    decoder_layers=1, decoder_attention_heads=2, d_model=32, encoder_ffn_dim=64, decoder_ffn_dim=64,
                    max_source_positions=32, max_target_positions=48, init_std=0.4, pad_token_id=eos,
                    bos_token_id=eos, eos_token_id=eos, decoder_start_token_id=start, begin_suppress_tokens=None,
                    suppress_tokens=None)
    config = WhisperConfig(**{**settings, **overrides})
    model = WhisperForConditionalGeneration(config).eval()
    model.generation_config.no_timestamps_token_id = notimestamps
    return model


# per family, the batch_of_two seed whose eager greedy decoding (16 tokens, both rows) has no near-tie:
# every step's top-2 logit margin is >= 0.04 (Float32/HiFi4 on the simulator moves these logits by up
# to ~0.04: HiFi4 multiplies 10- and 14-bit significands), and each row has >= 4 distinct tokens
SEEDS = {"t5": 30, "flan_t5": 21, "bart": 39, "mbart": 25, "pegasus": 4, "marian": 22, "whisper": 39}

FAMILIES = {"t5": t5, "flan_t5": functools.partial(t5, flan=True), "bart": bart, "mbart": mbart, "pegasus": pegasus,
            "marian": marian, "whisper": whisper}


def batch_of_two(model, lengths=(9, 6), seed: int = 1) -> dict:
    """generate() inputs for two prompts of different lengths (right padding, masked); Whisper: two
    random log-mel spectrograms."""
    generator = torch.Generator().manual_seed(seed)
    if type(model).__name__.startswith("Whisper"):
        return {"input_features": torch.randn(2, model.config.num_mel_bins, 2 * model.config.max_source_positions,
                                              generator=generator)}
    ids = torch.randint(3, VOCAB - 6, (2, max(lengths)), generator=generator)
    mask = torch.zeros_like(ids)
    for row, length in enumerate(lengths):
        mask[row, :length] = 1
        ids[row, length:] = model.config.pad_token_id
    return {"input_ids": ids, "attention_mask": mask}


# ---- offline tokenizers ------------------------------------------------------------------------------
def t5_tokenizer():
    """A T5 (Unigram) tokenizer over WORDS: <pad> 0, </s> 1, <unk> 2."""
    from transformers import T5Tokenizer

    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0)]
    pieces += [(f"▁{w}", -1.0 - 0.01 * i) for i, w in enumerate(dict.fromkeys(WORDS))]
    pieces += [(c, -5.0) for c in "abcdefghijklmnopqrstuvwxyz:.,"]
    return T5Tokenizer(vocab=pieces, extra_ids=0)


def whisper_tokenizer():
    """A Whisper (byte-level BPE) tokenizer: letters, a few words, then WHISPER_SPECIALS."""
    from transformers import WhisperTokenizer

    tokens = [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["Ġ"] + [f"Ġ{w}" for w in ("the", "cat", "sat", "on")]
    tokenizer = WhisperTokenizer(vocab={t: i for i, t in enumerate(tokens)}, merges=[])
    tokenizer.add_special_tokens({"additional_special_tokens": WHISPER_SPECIALS})
    return tokenizer


def whisper_feature_extractor():
    """16 mel bins and 64 frames of 250 samples at 16 kHz (one second): what whisper() takes."""
    from transformers import WhisperFeatureExtractor

    return WhisperFeatureExtractor(feature_size=16, sampling_rate=16000, hop_length=250, chunk_length=1, n_fft=400)


def waveform(seconds: float = 1.0, rate: int = 16000) -> np.ndarray:
    """A synthetic utterance: two tones that glide, with a little noise."""
    t = np.arange(int(seconds * rate)) / rate
    rng = np.random.default_rng(0)
    signal = 0.4 * np.sin(2 * np.pi * (220 + 180 * t) * t) + 0.2 * np.sin(2 * np.pi * 660 * t)
    return (signal + 0.01 * rng.standard_normal(t.shape)).astype(np.float32)
