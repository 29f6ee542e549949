"""An encoder-decoder's decoder step with static shapes and its caches outside the graph: what the device compiles.

transformers' `Seq2SeqLMExportableModule` (integrations/executorch.py) splits an encoder-decoder into
an encoder program and a decoder step against a static self-attention cache of fixed length, written
at the step's position, with each key at the index of its position. We keep that layout, but the
cache is not a buffer the graph mutates in place: each layer's past keys and values are inputs of the
step, the step's new keys and values are outputs, and the runtime writes them into the device's cache
buffers at the step's position (`loopback_outputs`, buda_runtime_sim/runtime/generation.py).
Inside the step, `StepCacheLayer.update` puts the new entries at their positions (a concat at the
first step, a `where` on the position after it: selections, exact at any math fidelity), so the
attention that follows sees the same [L] keys as transformers' StaticCache, and the model's own code
(positions, T5's relative position bias, lm head scaling, final logits bias) runs unchanged on them.

Cross-attention keys and values are computed once: the first step (`first=True`) takes the encoder's
hidden states and returns them beside its logits; later steps take them as inputs and the model's
attention reuses them (`EncoderDecoderCache.is_updated`), never projecting the encoder states again.

Inputs of a step: decoder_input_ids [B, T], position (int64 scalar: the cache slot of the first
token), self_mask [B, 1, T, L] and cross_mask [B, 1, 1, S] (additive: 0 attended, MASKED not),
then `caches`: per decoder layer its self-attention key and value [B, H, L, D], then either the
encoder's hidden states [B, S, d] (first step) or per layer the cross-attention key and value
[B, H, S, D]. Outputs: logits [B, T, vocab], per layer the step's new key and value [B, H, T, D],
and (first step) per layer the cross-attention key and value.
"""

from __future__ import annotations

import contextlib

import torch
from transformers.cache_utils import Cache, CacheLayerMixin, EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput

# additive mask of a key not attended: exp underflows to exactly 0. T5 does not scale its attention
# scores, and with large weights they pass 1e4, so the mask must be far beyond any score
MASKED = -1.0e9


class StepCacheLayer(CacheLayerMixin):
    """One layer's self-attention cache for one traced step: past [B, H, L, D] in, new entries recorded."""

    is_compileable = False
    is_sliding = False

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, position: torch.Tensor, first: bool):
        super().__init__()
        self.keys, self.values, self.position, self.first = keys, values, position, first
        self.is_initialized = True
        self.new: tuple[torch.Tensor, torch.Tensor] | None = None

    def lazy_initialization(self, key_states, value_states) -> None:
        """Nothing to allocate: the past comes in as inputs."""

    def update(self, key_states, value_states, *args, **kwargs):
        self.new = (key_states, value_states)
        return self._written(self.keys, key_states), self._written(self.values, value_states)

    def _written(self, past: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
        """`past` with `new` at positions [position, position + T): selected, not computed, so the
        values are exact at any math fidelity."""
        steps, length = new.shape[-2], past.shape[-2]
        if self.first:    # a sequence's first step starts at position 0
            return torch.cat([new, past[:, :, steps:]], dim=2)
        if steps == 1:
            return torch.where((torch.arange(length) == self.position)[:, None], new, past)
        slots = torch.arange(steps) + self.position   # several tokens later on: a one-hot matmul
        put = (torch.arange(length)[:, None] == slots[None, :]).to(new.dtype)
        return past * (1.0 - put.sum(dim=1, keepdim=True)) + torch.matmul(put, new)

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.keys.shape[-2], 0

    def get_seq_length(self):
        return self.position

    def get_max_length(self) -> int:
        return self.keys.shape[-2]


class CrossCacheLayer(CacheLayerMixin):
    """One layer's cross-attention keys/values: given (later steps) or recorded when first computed."""

    is_compileable = False
    is_sliding = False

    def __init__(self, keys: torch.Tensor | None = None, values: torch.Tensor | None = None):
        super().__init__()
        self.keys, self.values = keys, values
        self.is_initialized = keys is not None

    def lazy_initialization(self, key_states, value_states) -> None:
        """Nothing to allocate."""

    def update(self, key_states, value_states, *args, **kwargs):
        self.keys, self.values, self.is_initialized = key_states, value_states, True
        return key_states, value_states

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.keys.shape[-2], 0

    def get_seq_length(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def get_max_length(self) -> int:
        return -1


class Seq2SeqStep(torch.nn.Module):
    """A decoder step of `model` (a transformers ...ForConditionalGeneration) as a static-shape graph."""

    def __init__(self, model, first: bool, cross_mask: bool = True):
        super().__init__()
        self.model = model
        self.first = bool(first)
        self.cross_mask = bool(cross_mask)   # Whisper's encoder is never padded: its decoder takes no mask
        self.num_layers = decoder_layers(model.config)

    def forward(self, decoder_input_ids, position, self_mask, cross_mask, *caches):
        n = self.num_layers
        own = [StepCacheLayer(caches[2 * i], caches[2 * i + 1], position, self.first) for i in range(n)]
        if self.first:
            encoder_states = caches[2 * n]
            cross = [CrossCacheLayer() for _ in range(n)]
        else:
            cross = [CrossCacheLayer(caches[2 * n + 2 * i], caches[2 * n + 2 * i + 1]) for i in range(n)]
            # the model wants encoder states beside a filled cross cache, for their shape only (unused)
            batch, length = decoder_input_ids.shape[0], cross[0].keys.shape[-2]
            encoder_states = torch.zeros(batch, length, self.model.config.d_model)
        cache = EncoderDecoderCache(Cache(layers=own), Cache(layers=cross))
        for i in range(n):
            cache.is_updated[i] = not self.first
        extra = {"attention_mask": cross_mask} if self.cross_mask else {}
        with dict_outputs(self.model):
            out = type(self.model).forward(self.model, decoder_input_ids=decoder_input_ids,
                                           encoder_outputs=BaseModelOutput(last_hidden_state=encoder_states),
                                           decoder_attention_mask=self_mask, cache=cache, use_cache=True,
                                           return_dict=True, **extra)
        new = [t for layer in own for t in layer.new]
        computed = [t for layer in cross for t in (layer.keys, layer.values)] if self.first else []
        return (out.logits, *new, *computed)


@contextlib.contextmanager
def dict_outputs(module: torch.nn.Module):
    """config.return_dict = True on every config under `module` for the trace. PyBuda's demos set it
    False; transformers 5's encoder-decoders then get tuples from their submodules and fail reading
    their fields (T5ForConditionalGeneration: `decoder_outputs.cache`), eagerly too."""
    configs = {id(c): c for c in (getattr(m, "config", None) for m in module.modules()) if c is not None}
    saved = {key: getattr(c, "return_dict", True) for key, c in configs.items()}
    try:
        for c in configs.values():
            c.return_dict = True
        yield
    finally:
        for key, c in configs.items():
            c.return_dict = saved[key]


def decoder_layers(config) -> int:
    """Decoder layers of an encoder-decoder config (T5: num_decoder_layers; BART family, Whisper: decoder_layers)."""
    for attr in ("decoder_layers", "num_decoder_layers", "num_layers"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ValueError(f"{type(config).__name__}: cannot tell how many decoder layers the model has")


def self_mask(position: int, steps: int, length: int, batch: int, valid: torch.Tensor | None = None) -> torch.Tensor:
    """[B, 1, T, L] additive self-attention mask: step token t (at position + t) attends to slots up to its
    own; `valid` [B, >= position + T] (the decoder attention mask, 1 = real token) masks padding."""
    query = torch.arange(steps)[:, None] + position
    allowed = (torch.arange(length)[None, :] <= query).expand(batch, steps, length).clone()
    if valid is not None:
        seen = torch.zeros(batch, length, dtype=torch.bool)
        width = min(valid.shape[1], length)
        seen[:, :width] = valid[:, :width].bool()
        allowed &= seen[:, None, :]
        allowed[:, torch.arange(steps), query[:, 0]] = True   # each token attends at least to itself
    return torch.where(allowed, 0.0, MASKED).unsqueeze(1)


def cross_mask(valid: torch.Tensor) -> torch.Tensor:
    """[B, 1, 1, S] additive cross-attention mask from the encoder attention mask [B, S] (1 = real)."""
    return torch.where(valid.bool(), 0.0, MASKED)[:, None, None, :]
