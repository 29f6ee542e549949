"""Tiny random-weight transformers models for sweeps, built offline from a model type's config.

`hf:<model_type>` takes the installed transformers' default config of that type and shrinks its
sizes (hidden 64, 2 layers, 4 heads, vocabulary 1024, 64x64 images ...) by field name, including
nested text/vision/audio configs; `hf:<model_type>@config.json` starts from a config file instead
(its sizes are kept). The model is `AutoModel.from_config` with seeded weights, wrapped to return
its first output tensor (the last hidden state for most), with inputs made from its main input.
"""

from __future__ import annotations

import json
from pathlib import Path

SEQ_LEN = 32
IMAGE_SIZE = 64
VOCAB = 1024
AUDIO_SAMPLES = 3200

_SCALARS = {
    64: ("hidden_size", "d_model", "n_embd", "model_dim", "word_embed_proj_dim", "projection_dim",
         "text_embed_dim", "vision_embed_dim"),
    2: ("num_hidden_layers", "n_layer", "num_layers", "encoder_layers", "decoder_layers", "n_layers",
        "num_decoder_layers", "num_encoder_layers", "num_experts_per_tok", "num_hidden_groups"),
    4: ("num_attention_heads", "n_head", "num_heads", "encoder_attention_heads", "decoder_attention_heads",
        "n_heads", "num_experts", "num_local_experts", "n_routed_experts"),
    128: ("intermediate_size", "d_ff", "encoder_ffn_dim", "decoder_ffn_dim", "ffn_dim", "moe_intermediate_size",
          "shared_expert_intermediate_size", "n_inner", "decoder_ffn_embed_dim"),
    16: ("head_dim", "d_kv", "kv_channels", "attention_head_dim"),
    1: ("n_shared_experts", "first_k_dense_replace"),
}
_SMALL = {key: small for small, keys in _SCALARS.items() for key in keys}     # a size field's cap
_TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "cls_token_id", "mask_token_id",
              "decoder_start_token_id", "unk_token_id")
_LIST_SCALES = {"hidden_sizes": (16, 32, 64, 128), "embed_dims": (16, 32, 64, 128), "dims": (16, 32, 64, 128),
                "depths": (1, 1, 1, 1), "num_heads": (1, 2, 4, 8), "encoder_hidden_sizes": (16, 32, 64, 128)}


_LAYER_COUNTS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
_DERIVED = ("out_features", "out_indices", "stage_names")   # recomputed from the shrunk depths


def _per_layer(values: dict, out: dict) -> None:
    """Lists and dicts with one entry per layer (layer_types, ...) cut to the new layer count."""
    layers = next(((values[k], out[k]) for k in _LAYER_COUNTS if isinstance(values.get(k), int)), None)
    if layers is None or layers[0] == layers[1]:
        return
    before, after = layers
    for key, value in values.items():
        if isinstance(value, list) and len(value) == before and key not in _LIST_SCALES:
            out[key] = value[:after]
        elif isinstance(value, dict) and value and all(str(k).isdigit() for k in value):
            out[key] = {k: v for k, v in value.items() if int(k) < after}


def _shrunk(values: dict) -> dict:
    """The config dict with its size fields made small (nested sub-configs too)."""
    out = {}
    for key, value in values.items():
        if key in _DERIVED:
            continue
        if isinstance(value, dict) and "model_type" in value:
            out[key] = _shrunk(value)
            continue
        out[key] = value
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            for small, keys in _SCALARS.items():
                if key in keys:
                    out[key] = min(value, small) if key not in ("num_experts_per_tok",) else min(value, 2)
            if key == "num_key_value_heads":
                out[key] = _kv_heads(values, value)
            if key == "vocab_size":
                out[key] = min(value, VOCAB)
            if key in ("image_size", "input_size") and value > IMAGE_SIZE:
                out[key] = IMAGE_SIZE
            if key == "max_source_positions":
                out[key] = min(value, SEQ_LEN)
        elif isinstance(value, list) and key in _LIST_SCALES and all(isinstance(v, int) for v in value):
            scale = _LIST_SCALES[key]
            out[key] = [scale[min(i, len(scale) - 1)] for i in range(len(value))]
    _per_layer(values, out)
    vocab = out.get("vocab_size")
    if isinstance(vocab, int):
        for key in _TOKEN_IDS:
            if isinstance(out.get(key), int) and out[key] >= vocab:
                out[key] = vocab - 1 - _TOKEN_IDS.index(key)
    return out


def _kv_heads(values: dict, kv: int) -> int:
    """Key/value heads in the shrunk config: as many as the query heads if the real config has as
    many (multi-head attention, and latent attention, whose keys are expanded per query head), else
    the same grouping ratio, at least one."""
    heads = values.get("num_attention_heads")
    if not isinstance(heads, int) or heads <= 0:
        return min(kv, 2)
    small = min(heads, _SMALL["num_attention_heads"])
    return small if kv >= heads else max(1, small * kv // heads)


def model_types() -> list[str]:
    """Every model type the installed transformers can build with AutoModel."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    return sorted(MODEL_MAPPING_NAMES)


def tiny_config(model_type: str, config_file: str | Path | None = None):
    """The config an `hf:` reference names: the type's defaults shrunk, or a config file as is."""
    from transformers import AutoConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    if model_type not in CONFIG_MAPPING:
        raise ValueError(f"hf:{model_type}: transformers has no model type {model_type!r} "
                         "(see transformers.models.auto.configuration_auto.CONFIG_MAPPING_NAMES)")
    if config_file is not None:
        values = json.loads(Path(config_file).read_text())
        values.pop("model_type", None)
        return AutoConfig.for_model(model_type, **values)
    defaults = CONFIG_MAPPING[model_type]().to_dict()
    defaults.pop("model_type", None)
    defaults.pop("transformers_version", None)
    return AutoConfig.for_model(model_type, **_shrunk(defaults))


def config_json(model_type: str, config_file: str | Path | None = None) -> str:
    """The config as canonical JSON: what a sweep job's hash covers for an `hf:` model."""
    values = tiny_config(model_type, config_file).to_dict()
    values.pop("transformers_version", None)
    return json.dumps(values, sort_keys=True, default=str)


def _sizes(config) -> tuple[int, int, int]:
    """(vocabulary, image size, channels), looking into sub-configs when the top level lacks them."""
    subs = [config] + [getattr(config, k) for k in ("text_config", "vision_config", "encoder", "audio_config")
                       if hasattr(config, k) and getattr(config, k) is not None]

    def first(name, default):
        for c in subs:
            value = getattr(c, name, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, (list, tuple)) and value and isinstance(value[0], int):
                return value[0]
        return default

    return first("vocab_size", VOCAB), first("image_size", IMAGE_SIZE), first("num_channels", 3)


def sample_inputs(model, config, seed: int = 0) -> dict:
    """Inputs for the model's main input (and decoder ids for encoder-decoders), by name."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    vocab, image, channels = _sizes(config)
    name = getattr(model, "main_input_name", "input_ids")
    if name == "input_ids":
        inputs = {name: torch.randint(0, min(vocab, VOCAB), (1, SEQ_LEN), generator=generator)}
    elif name == "pixel_values":
        inputs = {name: torch.randn(1, channels, image, image, generator=generator)}
    elif name == "input_values":
        inputs = {name: torch.randn(1, AUDIO_SAMPLES, generator=generator)}
    elif name == "input_features":
        bins = getattr(config, "num_mel_bins", None) or getattr(config, "feature_size", 80)
        frames = 2 * getattr(config, "max_source_positions", SEQ_LEN)
        inputs = {name: torch.randn(1, bins, frames, generator=generator)}
    else:
        raise ValueError(f"{config.model_type}: no sample input for main input {name!r}")
    if getattr(config, "is_encoder_decoder", False):
        inputs["decoder_input_ids"] = torch.randint(0, min(vocab, VOCAB), (1, SEQ_LEN), generator=generator)
    return inputs


def first_tensor(output):
    """The last hidden state if the output has one, else its first tensor."""
    import torch

    if isinstance(output, torch.Tensor):
        return output
    hidden = getattr(output, "last_hidden_state", None)
    if isinstance(hidden, torch.Tensor):
        return hidden
    values = output.to_tuple() if hasattr(output, "to_tuple") else tuple(output)
    for value in values:
        if isinstance(value, torch.Tensor):
            return value
    raise ValueError(f"model output {type(output).__name__} holds no tensor")


def build(model_type: str, config_file: str | Path | None = None, seed: int = 0):
    """(module returning one tensor, positional sample inputs) for an `hf:` reference."""
    import torch
    from transformers import AutoModel

    config = tiny_config(model_type, config_file)
    torch.manual_seed(seed)
    model = AutoModel.from_config(config).eval()
    inputs = sample_inputs(model, config, seed)
    names = list(inputs)

    class FirstOutput(torch.nn.Module):
        """Keyword inputs made positional, one tensor out (what compile_model and compare want)."""

        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            return first_tensor(self.model(**dict(zip(names, args)), use_cache=False)
                                if _takes_use_cache(model) else self.model(**dict(zip(names, args))))

    return FirstOutput().eval(), tuple(inputs.values())


def _takes_use_cache(model) -> bool:
    import inspect

    try:
        return "use_cache" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False
