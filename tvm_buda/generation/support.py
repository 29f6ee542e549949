"""Which causal LMs the cached device path takes: those whose forward runs against a transformers
static-layout `Cache`. `static_cache_blocker(model)` says why not, or returns None."""

from __future__ import annotations

import inspect

# Architectures whose cached step compiles but gives wrong logits on the device: refused rather than wrong.
# None today. (Falcon was, until tvm_buda/frontends/torch_converters.py read its qkv[..., [-2], :] from the
# end as PyTorch does; TVM 0.27's own converter reads row 0.)
WRONG_ON_DEVICE: dict[str, str] = {}   # class name -> why its cached step is known wrong on the device


def static_cache_blocker(model) -> str | None:
    """A short reason this model cannot generate with a static KV cache on the device, or None."""
    config = getattr(model, "config", None)
    if config is None or not callable(getattr(model, "generate", None)):
        return "not a transformers model that generates"
    if getattr(config, "is_encoder_decoder", False):
        return "an encoder-decoder (its decoder steps also attend to the encoder's output)"
    supports = getattr(type(model), "_supports_default_dynamic_cache", None)
    if supports is not None and not supports():
        return "it keeps its own recurrent state instead of transformers' key/value Cache"
    if not getattr(type(model), "_can_compile_fullgraph", False):
        return ("transformers does not mark it static-cache ready (_can_compile_fullgraph=False: its attention "
                "depends on the cache's run-time length)")
    if type(model).__name__ in WRONG_ON_DEVICE:
        return WRONG_ON_DEVICE[type(model).__name__]
    params = inspect.signature(type(model).forward).parameters
    if "cache" not in params and "past_key_values" not in params:
        return "its forward takes no cache"
    if "attention_mask" not in params:
        return "its forward takes no attention mask"
    text = config.get_text_config(decoder=True)
    kinds = set(getattr(text, "layer_types", None) or ())
    unusual = sorted(kinds - {"full_attention", "sliding_attention"})
    if unusual:
        return f"its {unusual} layers keep a cache other than keys and values per position"
    return None
