"""Encoder-decoder generation on the device: `on_device(model)` for T5, BART, mBART, Pegasus, Marian, Whisper.

transformers' own `generate` keeps the decoding loop (greedy, sampling, beam search, logits
processors, stopping) on the host; what it calls runs on the simulated device:

- the encoder (`model.get_encoder().forward`): one program per input shape; a text encoder's
  sequence is padded up to a multiple of ENCODER_BUCKET tokens (masked), so prompts of similar
  length share it;
- the model's forward: a decoder step (seq2seq_step.py) against caches the device keeps. The first
  step of a sequence also computes every layer's cross-attention keys/values from the encoder
  states; they stay on the device. Each step's new self-attention keys/values are written into the
  device's cache buffers at the step's position (`PastCache`, the runtime's loopback buffers).

`generate` is wrapped to hand transformers a `DeviceCache`: the Cache object it sees, whose length
is the device's and whose `reorder_cache` (beam search) reorders the device's buffers. Programs are
compiled on first use with the global compiler config of that moment, one per (batch, tokens per
step, padded encoder length, cache length). The cache length is a multiple of CACHE_BUCKET that
covers the call's max_length (or `cache_len`); a sequence that outgrows it moves to a longer one.
"""

from __future__ import annotations

import copy
import functools
import inspect

import numpy as np
import torch
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput, Seq2SeqLMOutput

from .seq2seq_step import Seq2SeqStep, cross_mask, decoder_layers, dict_outputs, self_mask

ENCODER_BUCKET = 32   # tokens: a text encoder's input is padded up to a multiple of this (one tile)
CACHE_BUCKET = 32     # decoder cache positions are a multiple of this
_UNSUPPORTED = ("labels", "inputs_embeds", "decoder_inputs_embeds", "head_mask", "decoder_head_mask",
                "cross_attn_head_mask")
_FLAGS = ("output_attentions", "output_hidden_states")


def on_device(model, cache_len: int | None = None):
    """Run `model` (a transformers encoder-decoder for generation) on the device: its encoder, its forward
    (a cached decoder step) and its generate. Changes this instance only; returns it."""
    if not getattr(model.forward, "runs_on_device", False):
        Seq2SeqRunner(model, cache_len).install()
    return model


class Seq2SeqRunner:
    def __init__(self, model, cache_len: int | None = None):
        if not getattr(model.config, "is_encoder_decoder", False) or not hasattr(model, "get_encoder"):
            raise ValueError(f"{type(model).__name__} is not an encoder-decoder model (config.is_encoder_decoder)")
        if cache_len is not None and (not isinstance(cache_len, int) or cache_len < 1):
            raise ValueError(f"cache_len={cache_len!r}: give a positive number of decoder positions")
        self.model = model.eval()
        self.cache_len = cache_len
        self.layers = decoder_layers(model.config)
        self.heads, self.head_dim = _cache_heads(model.config)
        self.encoder = model.get_encoder()
        self.programs: dict[tuple, object] = {}      # (kind, shapes...) -> CompiledModel
        self.original_forward = model.forward
        self.original_encode = self.encoder.forward
        self.original_generate = model.generate
        self.forward_names = set(inspect.signature(self.original_forward).parameters)
        self.masks_encoder = "attention_mask" in self.forward_names and type(model).__name__ != \
            "WhisperForConditionalGeneration"   # Whisper's encoder input is never padded: no cross mask

    def install(self) -> None:
        self.model.forward = _device_callable(self.forward, self.original_forward)
        self.encoder.forward = _device_callable(self.encode, self.original_encode)
        self.model.generate = _device_callable(self.generate, self.original_generate)
        self.model.seq2seq_runner = self

    # ---- generate ---------------------------------------------------------------------------------
    def generate(self, *args, **kwargs):
        """transformers' generate with the device's cache (always used: it gives the same tokens)."""
        for key in ("cache", "past_key_values"):
            if kwargs.get(key) is not None:
                raise ValueError(f"generate({key}=...): the device keeps the decoder's cache itself; do not pass one")
        kwargs["use_cache"] = True
        kwargs["cache"] = DeviceCache(self, self._cache_length(kwargs))
        return self.original_generate(*args, **kwargs)

    def _cache_length(self, kwargs: dict) -> int:
        if self.cache_len is not None:
            return _round_up(self.cache_len, CACHE_BUCKET)
        config = copy.deepcopy(kwargs.get("generation_config") or self.model.generation_config)
        config.update(**{k: v for k, v in kwargs.items() if hasattr(config, k)})
        prompt = kwargs.get("decoder_input_ids")
        start = prompt.shape[-1] if isinstance(prompt, torch.Tensor) else 1
        total = start + config.max_new_tokens if config.max_new_tokens is not None else config.max_length
        return _round_up(max(int(total or 1), 1), CACHE_BUCKET)

    # ---- the encoder ------------------------------------------------------------------------------
    def encode(self, *args, **kwargs):
        bound = _bind(self.original_encode, args, kwargs)
        _check_flags(bound, "encoder")
        tensors = {k: v for k, v in bound.items() if isinstance(v, torch.Tensor)}
        length = None
        if "input_ids" in tensors:   # text: pad to the bucket, masked
            ids = tensors["input_ids"]
            length = ids.shape[1]
            mask = tensors.get("attention_mask", torch.ones_like(ids))
            padded = _round_up(length, ENCODER_BUCKET)
            tensors["input_ids"] = _pad_right(ids, padded, self._pad_id())
            tensors["attention_mask"] = _pad_right(mask.to(ids.dtype), padded, 0)
        names = tuple(tensors)
        key = ("encoder",) + tuple((n, tuple(t.shape), str(t.dtype)) for n, t in tensors.items())
        compiled = self.programs.get(key)
        if compiled is None:
            program = EncoderProgram(self.encoder, names)
            compiled = self.programs[key] = self._compile(f"{self._name()}_encoder", program, tuple(tensors.values()))
        hidden = compiled.run(*tensors.values())
        hidden = hidden[0] if isinstance(hidden, (tuple, list)) else hidden
        return BaseModelOutput(last_hidden_state=hidden if length is None else hidden[:, :length])

    # ---- the model's forward: one decoder step ---------------------------------------------------
    def forward(self, *args, **kwargs):
        bound = _bind(self.original_forward, args, kwargs)
        _check_flags(bound, "forward")
        for name in _UNSUPPORTED:
            if bound.get(name) is not None:
                raise NotImplementedError(f"{type(self.model).__name__} on the device: {name}= is not supported "
                                          "(generation takes decoder_input_ids and the encoder's inputs or outputs)")
        ids = bound.get("decoder_input_ids")
        if not isinstance(ids, torch.Tensor):
            raise ValueError("the device forward needs decoder_input_ids")
        encoder_outputs = bound.get("encoder_outputs")
        if encoder_outputs is None:
            inputs = {k: bound[k] for k in ("input_ids", "input_features", "attention_mask")
                      if isinstance(bound.get(k), torch.Tensor)}
            encoder_outputs = self.encoder(**inputs)
        states = encoder_outputs[0]
        cache = bound.get("cache", bound.get("past_key_values"))
        if isinstance(cache, DeviceCache):
            session = cache.session
        elif cache is None or not cache.get_seq_length():
            cache = None   # a forward of its own: a fresh cache holding this step's tokens
            session = DeviceSession(self, self.cache_len or _round_up(ids.shape[1], CACHE_BUCKET))
        else:
            raise NotImplementedError(f"the device forward keeps its own cache; a filled {type(cache).__name__} "
                                      "cannot be used (generate passes a DeviceCache)")
        encoder_mask = bound.get("attention_mask") if self.masks_encoder else None
        logits = session.step(ids, states, encoder_mask, bound.get("decoder_attention_mask"))
        return Seq2SeqLMOutput(logits=logits, cache=cache, encoder_last_hidden_state=states)

    # ---- programs ---------------------------------------------------------------------------------
    def step_program(self, first: bool, batch: int, steps: int, source: int, length: int):
        key = ("first" if first else "next", batch, steps, source, length)
        compiled = self.programs.get(key)
        if compiled is None:
            n = self.layers
            # distinct tensors (export would take one object passed twice for one input)
            caches = [torch.zeros(batch, self.heads, length, self.head_dim) for _ in range(2 * n)]
            tail = [torch.zeros(batch, source, self.model.config.d_model)] if first else \
                [torch.zeros(batch, self.heads, source, self.head_dim) for _ in range(2 * n)]
            sample = (torch.zeros(batch, steps, dtype=torch.int64), torch.tensor(0), self_mask(0, steps, length, batch),
                      torch.zeros(batch, 1, 1, source), *caches, *tail)
            module = Seq2SeqStep(self.model, first, cross_mask=self.masks_encoder)
            loopback = {f"caches_{i}": 1 + i for i in range(2 * n)}   # self-attention caches <- new entries
            name = f"{self._name()}_{key[0]}{steps}"
            compiled = self.programs[key] = self._compile(name, module, sample, loopback)
        return compiled

    def _compile(self, name: str, module, sample: tuple, loopback: dict | None = None):
        import tvm_buda
        from buda_runtime_sim.config import _get_global_compiler_config

        config = _get_global_compiler_config().copy()
        if loopback:
            config.loopback_outputs = loopback
        return tvm_buda.compile_model(tvm_buda.PyTorchModule(name, module), sample, config=config)

    def _name(self) -> str:
        return type(self.model).__name__.lower().replace("forconditionalgeneration", "")

    def _pad_id(self) -> int:
        pad = getattr(self.model.config, "pad_token_id", None)
        return 0 if pad is None else int(pad)


class DeviceSession:
    """One sequence batch's state on the device: self-attention cache buffers (loopback), the
    cross-attention keys/values and mask, and how many positions are filled."""

    def __init__(self, runner: Seq2SeqRunner, length: int):
        from buda_runtime_sim.runtime.generation import PastCache

        self.runner, self.length, self.position = runner, int(length), 0
        self.past = PastCache(f"{type(runner.model).__name__} generate")
        self.cross: list[np.ndarray] | None = None      # per layer key, value: [B, H, S, D], device-held
        self.cross_mask: torch.Tensor | None = None
        self.batch = self.source = None
        self._padded_states = None

    def step(self, ids: torch.Tensor, states, encoder_mask, decoder_mask) -> torch.Tensor:
        batch, steps = ids.shape
        if self.position % steps:
            raise NotImplementedError(f"a step of {steps} tokens at position {self.position}: the device writes a "
                                      "step's keys/values at a multiple of its length (decode one token per step)")
        if self.position + steps > self.length:
            self._grow(self.position + steps)
        first = self.cross is None
        if first:
            self._start(states, encoder_mask)
        elif batch != self.batch:
            raise ValueError(f"batch of {batch} rows, but this sequence's cache holds {self.batch}")
        program = self.runner.step_program(first, batch, steps, self.source, self.length)
        mask = self_mask(self.position, steps, self.length, batch, decoder_mask)
        tail = (self._padded_states,) if first else tuple(self.cross)
        pushed = (ids.to(torch.int64), torch.tensor(self.position), mask, self.cross_mask, *tail)
        outputs = self.past.step(program, lambda values: program.run(*values), pushed, self.position // steps, None, -1)
        if first:
            self.cross, self._padded_states = list(outputs[1:]), None
        self.position += steps
        return torch.from_numpy(np.ascontiguousarray(outputs[0]))

    def _start(self, states: torch.Tensor, encoder_mask) -> None:
        batch, source = states.shape[:2]
        padded = _round_up(source, ENCODER_BUCKET) if self.runner.masks_encoder else source
        valid = torch.ones(batch, source, dtype=torch.int64) if encoder_mask is None else encoder_mask
        self.batch, self.source = batch, padded
        self.cross_mask = cross_mask(_pad_right(valid.to(torch.int64), padded, 0))
        self._padded_states = torch.cat([states, states.new_zeros(batch, padded - source, states.shape[2])], dim=1)

    def _grow(self, needed: int) -> None:
        """A longer cache: the filled positions copied into new buffers (programs for the new length compile)."""
        from buda_runtime_sim.runtime.generation import PastCache

        old, self.length = self.past, _round_up(needed, CACHE_BUCKET)
        self.past = PastCache(old.owner)
        if old.buffers:
            self.past.bind(self.runner.step_program(False, self.batch, 1, self.source, self.length))
            for name, buffer in old.buffers.items():
                self.past.buffers[name][:, :, :buffer.shape[2]] = buffer

    def reorder(self, beam_idx: torch.Tensor) -> None:
        """Beam search: row i of every cache takes row beam_idx[i] (a gather on the device)."""
        index = np.asarray(beam_idx.cpu(), dtype=np.int64)
        for buffer in self.past.buffers.values():
            buffer[...] = buffer[index]
        if self.cross is not None:
            self.cross = [np.ascontiguousarray(c[index]) for c in self.cross]
            self.cross_mask = self.cross_mask[torch.from_numpy(index)]


class DeviceCache(EncoderDecoderCache):
    """The Cache transformers' generate holds: its contents live on the device (DeviceSession)."""

    def __init__(self, runner: Seq2SeqRunner, length: int):
        super().__init__(DynamicCache(), DynamicCache())
        self.session = DeviceSession(runner, length)
        self._layers = runner.layers

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.session.position

    def get_max_length(self, layer_idx: int | None = None) -> int:
        return self.session.length

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self.session.reorder(beam_idx)

    @property
    def is_linear(self):
        return [False] * self._layers

    @property
    def is_sliding(self):
        return [False] * self._layers

    @property
    def is_dummy(self):
        return [False] * self._layers

    def crop(self, tokens_to_remove: int) -> None:
        raise NotImplementedError("the device cache cannot be cropped (assisted decoding is not supported)")

    def batch_repeat_interleave(self, repeats: int) -> None:
        raise NotImplementedError("the device cache cannot be repeated (contrastive search is not supported)")

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        raise NotImplementedError("the device cache cannot select rows (contrastive search is not supported)")


class EncoderProgram(torch.nn.Module):
    """The encoder's forward over named tensors, returning its last hidden state (what the device compiles)."""

    def __init__(self, encoder, names: tuple[str, ...]):
        super().__init__()
        self.encoder, self.names = encoder, names

    def forward(self, *tensors):
        with dict_outputs(self.encoder):
            out = type(self.encoder).forward(self.encoder, **dict(zip(self.names, tensors)), return_dict=True)
        return out.last_hidden_state


def _device_callable(method, original):
    """`method` shown to transformers with `original`'s name and signature (it reads signatures)."""
    @functools.wraps(original)
    def call(*args, **kwargs):
        return method(*args, **kwargs)

    call.runs_on_device = True
    return call


def _bind(original, args, kwargs) -> dict:
    bound = inspect.signature(original).bind_partial(*args, **kwargs).arguments
    extra = bound.pop("kwargs", None) or {}
    return {**bound, **extra}


def _check_flags(bound: dict, what: str) -> None:
    for flag in _FLAGS:
        if bound.get(flag):
            raise NotImplementedError(f"the device {what} does not return {flag.split('_', 1)[1]} ({flag}=True)")


def _cache_heads(config) -> tuple[int, int]:
    heads = getattr(config, "decoder_attention_heads", None) or getattr(config, "num_heads", None)
    if not heads:
        raise ValueError(f"{type(config).__name__}: cannot tell the decoder's attention heads")
    head_dim = getattr(config, "d_kv", None) or config.d_model // heads
    return int(heads), int(head_dim)


def _round_up(value: int, multiple: int) -> int:
    return -(-int(value) // multiple) * multiple


def _pad_right(tensor: torch.Tensor, length: int, value) -> torch.Tensor:
    if tensor.shape[1] >= length:
        return tensor
    pad = torch.full((tensor.shape[0], length - tensor.shape[1], *tensor.shape[2:]), value, dtype=tensor.dtype)
    return torch.cat([tensor, pad], dim=1)
