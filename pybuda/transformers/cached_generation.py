"""The KV-cache path of `pybuda.transformers.pipeline` for GPT-2: `model.generate` for greedy,
batch-1 calls runs a prefill and a decode program on the simulator with a past cache, instead of
recomputing the padded sequence for every token.

A call qualifies when nothing in it changes greedy decoding: do_sample off, one beam, one
sequence, no logits processors (repetition penalty, n-gram blocking, min length, bad words ...),
no extra model inputs, an all-ones attention mask, and room in the cache (`pad_to` positions).
Anything else goes to transformers' own generate, whose forward still runs on the device
without a cache (pipeline.py). The decode program is compiled once; a prefill once per prompt
length bucket (multiples of 32 tokens, one tile). The cache lives in a PastCache
(buda_runtime_sim/runtime/generation.py), the runtime's device-side buffers, outside any TTDevice
so a pipeline never touches the user's device pipeline.
"""

from __future__ import annotations

import copy

PROMPT_BUCKET = 32  # prefill lengths are padded to whole tiles
# generation-config fields that may differ from transformers' defaults without changing greedy decoding
_NEUTRAL = frozenset({"max_length", "max_new_tokens", "pad_token_id", "eos_token_id", "bos_token_id",
                      "decoder_start_token_id", "use_cache", "transformers_version", "_from_model_config",
                      "do_sample", "num_beams", "num_return_sequences", "cache_implementation"})
# extra outputs: neutral while off (a call asking for scores or attentions takes transformers' path)
_OFF_OUTPUTS = frozenset({"output_attentions", "output_hidden_states", "output_scores", "output_logits",
                          "return_dict_in_generate"})


def use_cached_generate(model, cache_len: int) -> None:
    """Give a GPT-2 LM's instance a `generate` with the KV-cache path (others are left alone)."""
    if type(model).__name__ == "GPT2LMHeadModel" and not getattr(model.generate, "runs_on_device", False):
        model.generate = CachedGreedyGenerate(model, cache_len)


class CachedGreedyGenerate:
    runs_on_device = True

    def __init__(self, model, cache_len: int):
        self.model = model
        self.original = model.generate
        self.cache_len = int(cache_len)
        self.programs: dict[int, object] = {}   # step length -> CompiledModel (1: decode)
        self.cached_calls = 0                    # calls served by the KV-cache path

    def __call__(self, input_ids=None, attention_mask=None, generation_config=None, **kwargs):
        plan = greedy_plan(self.model, input_ids, attention_mask, generation_config, kwargs, self.cache_len)
        if plan is None:
            return self.original(input_ids=input_ids, attention_mask=attention_mask,
                                 generation_config=generation_config, **kwargs)
        from buda_runtime_sim.runtime.generation import PastCache
        from tvm_buda.generation.decoder import PREFILL, greedy_decode

        n = input_ids.shape[1]
        prompt_len = min(-(-n // PROMPT_BUCKET) * PROMPT_BUCKET, self.cache_len)
        programs = {PREFILL: self._program(prompt_len), 1 - PREFILL: self._program(1)}
        cache = PastCache(f"{type(self.model).__name__} generate")

        def run(program, inputs, write_index):
            compiled = programs[program]
            outputs = cache.step(compiled, lambda values: compiled.run(*values), inputs, write_index, None, -1)
            return _torch(outputs[0])

        self.cached_calls += 1
        new_tokens, eos = plan
        return greedy_decode(run, input_ids, new_tokens, prompt_len, self.cache_len, eos)

    def _program(self, step_len: int):
        """The compiled step of `step_len` tokens against the cache (compiled on first use)."""
        compiled = self.programs.get(step_len)
        if compiled is None:
            import tvm_buda
            from buda_runtime_sim.config import _get_global_compiler_config
            from tvm_buda.generation import GPT2CacheStep

            shared = next(iter(self.programs.values()), None)
            step = GPT2CacheStep(self.model, self.cache_len, step_len,
                                 lm_head_weight=shared.step_module.lm_head_weight if shared else None)
            config = _get_global_compiler_config().copy()
            config.loopback_outputs = {f"past_{i}": 1 + i for i in range(2 * step.num_layers)}
            name = "gpt2_decode" if step_len == 1 else f"gpt2_prefill{step_len}"
            compiled = tvm_buda.compile_model(tvm_buda.PyTorchModule(name, step), step.sample_inputs(), config=config)
            compiled.step_module = step
            self.programs[step_len] = compiled
        return compiled


def greedy_plan(model, input_ids, attention_mask, generation_config, kwargs: dict, cache_len: int):
    """(new tokens, eos token ids) of a qualifying greedy call, or None when the call does not qualify."""
    import torch

    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.shape[0] != 1:
        return None
    if attention_mask is not None and not bool(torch.all(attention_mask == 1)):
        return None
    config = copy.deepcopy(generation_config if generation_config is not None else model.generation_config)
    if config.update(**kwargs):   # keys that are not generation settings: extra model inputs
        return None
    changed = {k for k, v in config.to_diff_dict().items() if not (k in _OFF_OUTPUTS and not v)}
    if changed - _NEUTRAL or config.do_sample or (config.num_beams or 1) != 1 \
            or (config.num_return_sequences or 1) != 1:
        return None
    n = input_ids.shape[1]
    new_tokens = config.max_new_tokens if config.max_new_tokens is not None else config.max_length - n
    if new_tokens < 1 or n + new_tokens - 1 > cache_len:
        return None
    return int(new_tokens), _as_set(config.eos_token_id)


def _torch(array):
    import torch

    return torch.as_tensor(array)


def _as_set(value) -> set:
    if value is None:
        return set()
    return {int(value)} if isinstance(value, int) else {int(v) for v in value}
