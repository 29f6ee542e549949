"""CachedDecoder: transformers' own `generate` for any causal LM, each forward a device program with the KV
cache kept on the device.

transformers' generation loop stays on the host (greedy, sampling, beam search, logits processors,
stopping criteria, streamers: whatever `generate` does), and calls the model's forward once per step.
`CachedDecoder.install(model, fallback)` gives the model instance
- a forward (`DeviceLMForward`, with the model's own signature, so generate builds attention masks and
  position ids as it does for the model) that runs a DecoderStep program on the device: a prefill
  program for multi-token calls (padded to whole tiles) and a decode program for one token, each
  compiled once per batch size and cache length;
- a cache: generate's cache set-up makes a DeviceKVCache sized for the call (prompt + new tokens, in
  power-of-two buckets) whose key/value buffers the device programs fill.
Calls without that cache (use_cache=False, a bare forward) go to `fallback`.
"""

from __future__ import annotations

import inspect
import warnings

import torch

from .device_cache import DeviceKVCache
from .programs import StepPrograms, run_program
from .step import cache_layout
from .step_inputs import cache_length, step_inputs, step_length
from .support import static_cache_blocker

# forward arguments the cached step serves as generate passes them (the others must be unset)
_SERVED = frozenset({"input_ids", "attention_mask", "position_ids", "cache", "past_key_values", "use_cache",
                     "logits_to_keep", "return_dict", "kwargs"})
_OFF = frozenset({"output_attentions", "output_hidden_states", "labels", "inputs_embeds", "token_type_ids"})


class CachedDecoder:
    def __init__(self, model, config=None):
        reason = static_cache_blocker(model)
        if reason:
            raise NotImplementedError(f"{type(model).__name__}: {reason}")
        self.model = model
        self.layout = cache_layout(model)
        self.programs = StepPrograms(model, self.layout, config)
        self.names = [f"past_{i}" for i in range(2 * len(self.layout))]
        self.steps = 0          # forward calls served with the device cache

    @classmethod
    def install(cls, model, fallback, config=None) -> "CachedDecoder | None":
        """Generation of `model` through the device with its KV cache; None (after a one-line notice) when
        the architecture cannot take a static cache, leaving the model as it was."""
        try:
            decoder = cls(model, config)
        except NotImplementedError as exc:
            warnings.warn(f"no KV cache on the device for {exc}; generation re-runs the whole sequence for every token",
                          stacklevel=2)
            return None
        return decoder.attach(fallback)

    def attach(self, fallback) -> "CachedDecoder":
        """Give the model instance the device forward and the device cache set-up of generate."""
        self.model.forward = DeviceLMForward(self.model, self, fallback)
        self.model._prepare_cache_for_generation = _CacheSetUp(self.model, self)
        return self

    def new_cache(self, batch: int, tokens: int, store=None) -> DeviceKVCache:
        """A cache for `batch` sequences of up to `tokens` tokens (buffers in `store`, a PastCache: a new
        one unless given)."""
        if store is None:
            from buda_runtime_sim.runtime.generation import PastCache

            store = PastCache(f"{type(self.model).__name__} generate")
        return DeviceKVCache(store, self.names, batch, cache_length(tokens), len(self.layout))

    def step(self, cache: DeviceKVCache, input_ids, attention_mask=None, position_ids=None) -> torch.Tensor:
        """Logits [B, T, vocab] of T new tokens; their keys/values go into `cache` on the device."""
        batch, tokens = input_ids.shape
        if batch != cache.batch:
            raise ValueError(f"{batch} sequences, but the device cache was made for {cache.batch}")
        start = cache.length
        if start + tokens > cache.cache_len:
            raise ValueError(f"{start} + {tokens} tokens do not fit the device cache of {cache.cache_len} slots")
        step_len = step_length(tokens, start, cache.cache_len)
        compiled = self.programs.get(batch, step_len, cache.cache_len)
        inputs = step_inputs(input_ids, attention_mask, position_ids, start, step_len, cache.cache_len)
        logits = self.run(cache, compiled, inputs, start)
        cache.advance(tokens)
        self.steps += 1
        return logits[:, :tokens]

    def run(self, cache: DeviceKVCache, compiled, inputs: tuple, start: int) -> torch.Tensor:
        """One program run; the keys/values it writes go to the cache's buffers from slot `start`."""
        return run_program(cache.store, compiled, inputs, start)


class DeviceLMForward:
    """The forward `generate` calls: with a DeviceKVCache, a device step; otherwise `fallback`."""

    runs_on_device = True

    def __init__(self, model, decoder: CachedDecoder, fallback):
        self.model, self.decoder, self.fallback = model, decoder, fallback
        self.signature = inspect.signature(type(model).forward.__get__(model))
        self.__signature__ = self.signature   # transformers reads what the forward takes from this

    def __call__(self, *args, **kwargs):
        bound = self.signature.bind_partial(*args, **kwargs).arguments
        extra = bound.pop("kwargs", {}) or {}
        named = {**bound, **extra}
        cache = named.get("cache", named.get("past_key_values"))
        if not isinstance(cache, DeviceKVCache):
            return self.fallback(*args, **kwargs)
        unserved = sorted(k for k, v in named.items() if k not in _SERVED and _is_set(k, v))
        if unserved:
            raise NotImplementedError(f"{type(self.model).__name__} on the device with its KV cache: {unserved} "
                                      "are not available (the step returns logits only); generate without them")
        from transformers.modeling_outputs import CausalLMOutputWithPast

        logits = self.decoder.step(cache, named["input_ids"], named.get("attention_mask"), named.get("position_ids"))
        return CausalLMOutputWithPast(logits=_keep(logits, named.get("logits_to_keep", 0)), cache=cache)


class _CacheSetUp:
    """Stands in for GenerationMixin._prepare_cache_for_generation on the instance: a generate call that
    uses a cache gets a DeviceKVCache for its batch (beams and returned sequences included) and length."""

    def __init__(self, model, decoder: CachedDecoder):
        self.original = type(model)._prepare_cache_for_generation.__get__(model)
        self.decoder = decoder

    def __call__(self, generation_config, model_kwargs, generation_mode, batch_size, max_cache_length, *args):
        if model_kwargs.get("cache") is not None or generation_config.use_cache is False:
            return self.original(generation_config, model_kwargs, generation_mode, batch_size, max_cache_length, *args)
        copies = max(generation_config.num_beams or 1, generation_config.num_return_sequences or 1)
        model_kwargs["cache"] = self.decoder.new_cache(copies * batch_size, max_cache_length)
        return None


def _is_set(name: str, value) -> bool:
    if value is None or value is False:
        return False
    return name in _OFF or isinstance(value, torch.Tensor)


def _keep(logits: torch.Tensor, logits_to_keep) -> torch.Tensor:
    if isinstance(logits_to_keep, int):
        return logits if logits_to_keep == 0 else logits[:, -logits_to_keep:]
    return logits[:, logits_to_keep]
