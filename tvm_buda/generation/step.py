"""DecoderStep: one static-shape step of any transformers causal LM against a KV cache held outside it.

The step calls the model's own forward (its attention, position scheme and mask building untouched)
with `StepCache`, a transformers `Cache` laid out as a `StaticCache` of `cache_len` slots whose
contents come in as inputs. A layer's `update(key, value)` writes the step's keys and values into
its slots arithmetically (`past * keep + write @ new`, with `write` the one-hot [cache_len, T]
matrix of the step's slots, built from `write_slots`), so the graph has no scatter and the
device runs it; the model then attends over the whole static cache, as with transformers'
StaticCache. The step's new keys and values are also outputs: the runtime writes them into its
cache buffers at the step's position (PyBuda's past-cache loopback), so the next step reads them.

Inputs, in order: input_ids [B, T], attention_mask [B, cache_len] (1 where a slot holds a token
that may be attended: a 2-D padding mask over the whole static cache), position_ids [B, T] (unused
by models whose forward derives positions itself), write_slots [T] (the slots this step fills), then one key and
one value per layer, [B, kv_heads, cache_len, head_dim]. Outputs: logits [B, T, vocab], then the
new key and value of each layer, [B, kv_heads, T, head_dim].
"""

from __future__ import annotations

import inspect

import torch
from transformers.cache_utils import Cache, CacheLayerMixin


class StepLayer(CacheLayerMixin):
    """One layer of StepCache: a static layer whose slots are the tensors `keys`, `values`."""

    is_compileable = True
    is_sliding = False

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, write: torch.Tensor, keep: torch.Tensor,
                 past_length: torch.Tensor):
        super().__init__()
        self.keys, self.values = keys, values
        self.write, self.keep, self.past_length = write, keep, past_length
        self.is_initialized = True
        self.new: tuple[torch.Tensor, torch.Tensor] | None = None

    def lazy_initialization(self, key_states, value_states) -> None:  # the slots are inputs: nothing to allocate
        pass

    def update(self, key_states, value_states, *args, **kwargs):
        if self.new is not None:
            raise RuntimeError("a layer of this model updated its cache twice in one step; its generation cannot "
                               "use a static cache")
        self.new = (key_states, value_states)
        write = self.write.to(key_states.dtype)
        keys = self.keys * self.keep + torch.matmul(write, key_states)
        values = self.values * self.keep + torch.matmul(write, value_states)
        return keys, values

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.keys.shape[2], 0

    def get_seq_length(self):
        return self.past_length

    def get_max_length(self) -> int:
        return self.keys.shape[2]


class StepCache(Cache):
    def __init__(self, past: tuple[torch.Tensor, ...], write_slots: torch.Tensor):
        cache_len = past[0].shape[2]
        slots = torch.arange(cache_len, device=write_slots.device)
        write = (slots.unsqueeze(1) == write_slots.unsqueeze(0)).float()   # [L, T]
        keep = 1.0 - write.sum(dim=1, keepdim=True)                        # [L, 1]
        past_length = write_slots[0]
        super().__init__(layers=[StepLayer(past[i], past[i + 1], write, keep, past_length)
                                 for i in range(0, len(past), 2)])

    def new_entries(self) -> list[torch.Tensor]:
        missing = [i for i, layer in enumerate(self.layers) if layer.new is None]
        if missing:
            raise RuntimeError(f"layer(s) {missing} did not update the cache: the model's attention does not use "
                               "transformers' Cache API")
        return [t for layer in self.layers for t in layer.new]


def takes_position_ids(model) -> bool:
    return "position_ids" in inspect.signature(type(model).forward).parameters


class DecoderStep(torch.nn.Module):
    """A step of `step_len` tokens for `batch` sequences against `cache_len` cache slots (see the module doc).
    `layout` is the [(key shape, value shape)] per layer from `cache_layout`, for batch 1 and no slots."""

    def __init__(self, model, batch: int, step_len: int, cache_len: int, layout: list):
        super().__init__()
        self.model = model
        self.batch, self.step_len, self.cache_len = int(batch), int(step_len), int(cache_len)
        self.layout = layout
        self.with_positions = takes_position_ids(model)

    def input_names(self) -> list[str]:
        return ["input_ids", "attention_mask", "position_ids", "write_slots"] + \
            [f"past_{i}" for i in range(2 * len(self.layout))]

    def cache_shapes(self) -> list[tuple[int, ...]]:
        return [(self.batch, shape[1], self.cache_len, shape[3]) for pair in self.layout for shape in pair]

    def sample_inputs(self) -> tuple[torch.Tensor, ...]:
        """Inputs of the compiled shapes (an empty cache; the mask admits the step's own slots)."""
        b, t = self.batch, self.step_len
        mask = torch.zeros((b, self.cache_len), dtype=torch.int64)
        mask[:, :t] = 1
        positions = torch.arange(t).expand(b, t).contiguous()
        return (torch.zeros((b, t), dtype=torch.int64), mask, positions, torch.arange(t),
                *[torch.zeros(s) for s in self.cache_shapes()])

    def forward(self, input_ids, attention_mask, position_ids, write_slots, *past):
        """position_ids go to models whose forward takes them (the others derive positions themselves)."""
        cache = StepCache(past, write_slots)
        extra = {"position_ids": position_ids} if self.with_positions else {}
        out = type(self.model).forward(self.model, input_ids=input_ids, attention_mask=attention_mask, cache=cache,
                                       use_cache=True, return_dict=True, **extra)
        return (out.logits, *cache.new_entries())


class _ProbeLayer(StepLayer):
    """Records the shapes of the keys/values one layer writes (batch 1, no past)."""

    def update(self, key_states, value_states, *args, **kwargs):
        self.new = (key_states, value_states)
        return key_states, value_states

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return query_length, 0


def cache_layout(model) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """[(key shape, value shape)] per layer, from one eager token through the model's own forward: the
    heads and head sizes its cache holds, whatever the architecture calls them."""
    layers = _num_layers(model)
    zero = torch.zeros((), dtype=torch.int64)
    empty = torch.zeros(1, 1, 0, 1)
    probe = Cache(layers=[_ProbeLayer(empty, empty, empty, empty, zero) for _ in range(layers)])
    extra = {"position_ids": torch.zeros((1, 1), dtype=torch.int64)} if takes_position_ids(model) else {}
    with torch.no_grad():
        type(model).forward(model, input_ids=torch.zeros((1, 1), dtype=torch.int64),
                            attention_mask=torch.ones((1, 1), dtype=torch.int64), cache=probe, use_cache=True,
                            return_dict=True, **extra)
    missing = [i for i, layer in enumerate(probe.layers) if layer.new is None]
    if missing:
        raise NotImplementedError(f"layer(s) {missing} of {type(model).__name__} never called Cache.update")
    return [tuple((1, t.shape[1], 0, t.shape[3]) for t in layer.new) for layer in probe.layers]


def _num_layers(model) -> int:
    config = model.config.get_text_config(decoder=True)
    for attr in ("num_hidden_layers", "n_layer", "num_layers"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    raise NotImplementedError(f"{type(config).__name__}: cannot tell the number of layers")
