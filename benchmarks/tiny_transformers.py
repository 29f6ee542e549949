"""Tiny random-weight instances of transformers' model classes, built offline, and tensor inputs
for them: what benchmarks/architectures.py runs through plain TVM and tvm-buda.

A config is the class's defaults with every size shrunk (widths to 64, heads to 2, layers to 2,
feed-forward widths to 128, vocabularies to 512, per-stage lists to small values), rebuilt through
the config class so derived fields follow. Inputs are the model's main input (token ids, pixels,
audio) plus whatever else its forward turns out to need among the usual tensor inputs.
"""

from __future__ import annotations

import inspect

WIDTH, HEADS, LAYERS, FFN, VOCAB, SEQ = 64, 2, 2, 128, 512, 16
MAX_PARAMS = 30_000_000
_WIDTHS = {"hidden_size", "d_model", "n_embd", "dim", "embed_dim", "hidden_dim", "embedding_size", "d_embed",
           "word_embed_proj_dim", "projection_dim", "projection_size", "pooler_hidden_size", "text_embed_dim",
           "vision_embed_dim", "encoder_hidden_size", "decoder_hidden_size", "n_embed", "model_dim", "emb_dim"}
_HEADS = {"num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
          "decoder_attention_heads", "attention_heads", "num_attention_heads_per_layer"}
_KV_HEADS = {"num_key_value_heads", "n_kv_heads", "num_kv_heads", "multi_query_group_num", "n_head_kv"}
_LAYERS = {"num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers", "decoder_layers",
           "num_encoder_layers", "num_decoder_layers", "num_blocks"}
_FFN = {"intermediate_size", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner", "d_ff", "d_inner",
        "ffn_hidden_size", "mlp_dim", "moe_intermediate_size", "shared_expert_intermediate_size"}
_EXPERTS = {"num_experts", "num_local_experts", "n_routed_experts"}
_SPECIAL_IDS = {"pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "sep_token_id",
                "cls_token_id", "mask_token_id", "unk_token_id"}
_SCALED_LISTS = {"hidden_sizes", "embed_dims", "dims", "channels", "num_channels_per_stage", "hidden_dims",
                 "embedding_sizes", "out_channels", "conv_dim", "widths"}


def shrink(values: dict) -> dict:
    """A config dict (to_dict()) with every size small; sub-config dicts shrunk too."""
    out = dict(values)
    old_layers = next((values[k] for k in _LAYERS if isinstance(values.get(k), int)), None)
    heads = next((values[k] for k in _HEADS if isinstance(values.get(k), int)), None)
    for key, value in values.items():
        if isinstance(value, dict) and not key.endswith("_map") and key not in ("id2label", "label2id"):
            out[key] = shrink(value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            out[key] = _shrunk_int(key, value, heads)
        elif isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool)
                                                       for v in value):
            out[key] = _shrunk_list(key, value)
        elif isinstance(value, list) and old_layers and len(value) == old_layers and key.endswith("types"):
            out[key] = value[:LAYERS]          # per-layer kinds (layer_types, attention types)
    if "head_dim" in values and isinstance(values["head_dim"], int):
        out["head_dim"] = WIDTH // HEADS
    vocab = out.get("vocab_size")
    if isinstance(vocab, int):
        ids = [out[k] for k in _SPECIAL_IDS if isinstance(out.get(k), int)]
        out["vocab_size"] = min(values["vocab_size"], max([vocab] + [i + 1 for i in ids]))
    return out


def _shrunk_int(key: str, value: int, heads: int | None) -> int:
    if key in _WIDTHS:
        return min(value, WIDTH)
    if key in _HEADS:
        return min(value, HEADS)
    if key in _KV_HEADS:
        return 1 if heads and value < heads else min(value, HEADS)
    if key in _LAYERS:
        return min(value, LAYERS)
    if key in _FFN:
        return min(value, FFN)
    if key in _EXPERTS:
        return min(value, 4)
    if key == "vocab_size":
        return min(value, VOCAB)
    if key == "max_position_embeddings":
        return min(value, 512)
    if key == "num_experts_per_tok":
        return min(value, 2)
    return value


def _shrunk_list(key: str, value: list) -> list:
    if key == "depths" or key.endswith("_depths") or key == "block_repeats" or key == "num_layers":
        return [min(v, 1) for v in value]
    if key in _SCALED_LISTS:
        return [min(v, 16 * 2 ** i) for i, v in enumerate(value)]
    if key in _HEADS or key == "num_heads":
        return [min(v, 1 + i // 2) for i, v in enumerate(value)]
    if key == "block_sizes":
        return [min(v, 1) for v in value]
    return value


def tiny_config(config_class):
    """The class's default config, shrunk and rebuilt (so derived fields follow the new sizes)."""
    defaults = config_class().to_dict()
    small = shrink(defaults)
    for key in ("model_type", "transformers_version", "architectures", "_name_or_path"):
        small.pop(key, None)
    return config_class(**small)


def parameter_count(model_class, config) -> int:
    """Parameters of the model, counted on the meta device (nothing allocated)."""
    import torch

    with torch.device("meta"):
        model = model_class(config)
    return sum(p.numel() for p in model.parameters())


def build(model_class, config):
    import torch

    torch.manual_seed(0)
    return model_class(config).eval()


def candidate_inputs(model, config) -> list[dict]:
    """Feeds to try in order: the main input alone, then with the other tensor inputs it may need."""
    import torch

    generator = torch.Generator().manual_seed(0)
    params = inspect.signature(model.forward).parameters
    text = _text_config(config)
    vocab = max(2, min(int(getattr(text, "vocab_size", VOCAB) or VOCAB), VOCAB))
    ids = torch.randint(3 if vocab > 8 else 0, vocab, (1, SEQ), generator=generator)
    tensors = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "decoder_input_ids": ids[:, : SEQ // 2],
               "token_type_ids": torch.zeros_like(ids)}
    vision = getattr(config, "vision_config", config)
    size = getattr(vision, "image_size", 32)
    size = size[0] if isinstance(size, (list, tuple)) else size
    channels = getattr(vision, "num_channels", 3)
    tensors["pixel_values"] = torch.rand(1, channels, size, size, generator=generator)
    tensors["input_values"] = torch.randn(1, 4000, generator=generator)
    mel = getattr(config, "num_mel_bins", 80)
    frames = 2 * getattr(config, "max_source_positions", 50)
    tensors["input_features"] = torch.randn(1, mel, frames, generator=generator)
    main = getattr(model, "main_input_name", "input_ids")
    if main not in tensors or main not in params:
        return []
    base = {main: tensors[main]}
    if "attention_mask" in params and main == "input_ids":
        base["attention_mask"] = tensors["attention_mask"]
    others = [n for n in ("pixel_values", "input_ids", "decoder_input_ids", "token_type_ids")
              if n in params and n not in base]
    feeds = [base] + [{**base, n: tensors[n]} for n in others]
    if len(others) > 1:
        feeds.append({**base, **{n: tensors[n] for n in others}})
    return feeds


def _text_config(config):
    return getattr(config, "text_config", None) or getattr(config, "decoder", None) or config
