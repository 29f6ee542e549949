"""TTDeviceDecoder: CachedDecoder whose two programs are placed on a TTDevice and run with PyBuda's
generation API (`set_active_subgraph`, `push_to_inputs`, `TTDevice.generate(write_index=...)`).

The prefill program (`prompt_len` tokens) and the decode program (one token) are compiled once each
at placement, for one batch size and one cache length; the TTDevice's own past-cache buffers hold the
keys/values (its `loopback_outputs` links are set for this device's compiles only, never in the user's
global config). `generate` is transformers' `model.generate`, whose forward runs these programs.
"""

from __future__ import annotations

import torch

from .decoder import CachedDecoder
from .device_cache import DeviceKVCache
from .programs import loopback_links, program_name
from .step import DecoderStep

PREFILL, DECODE = 0, 1   # active-subgraph indices of the two programs


class TTDeviceDecoder(CachedDecoder):
    def __init__(self, model, batch: int = 1, prompt_len: int = 32, cache_len: int = 64, device_name: str = "tt0"):
        super().__init__(model)
        from buda_runtime_sim.runtime import TTDevice, initialize_pipeline
        from buda_runtime_sim.runtime.devices import registered_devices

        import tvm_buda

        if not 0 < prompt_len <= cache_len:
            raise ValueError(f"TTDeviceDecoder: need 0 < prompt_len ({prompt_len}) <= cache_len ({cache_len})")
        busy = [d.name for d in registered_devices() if d.active and d.modules]
        if busy:
            raise RuntimeError(f"TTDeviceDecoder places its programs on a new TTDevice, but device(s) {busy} already "
                               "form the pipeline (devices run in creation order); call pybuda.shutdown() first")
        self.batch, self.prompt_len, self.cache_len = int(batch), int(prompt_len), int(cache_len)
        self.step_modules = [DecoderStep(model, batch, length, cache_len, self.layout) for length in (prompt_len, 1)]
        self.device = TTDevice(device_name, module=[
            tvm_buda.PyTorchModule(program_name(model, batch, s.step_len, cache_len), s) for s in self.step_modules])
        self.device.config_overrides["loopback_outputs"] = loopback_links(self.step_modules[0])
        for index, step in enumerate(self.step_modules):   # compile each program once, its caches in the sample
            self.device.set_active_subgraph(index)
            self.output_queue = initialize_pipeline(training=False, sample_inputs=step.sample_inputs())
        self.attach(_only_through_generate)

    @property
    def compiled(self) -> list:
        """[prefill, decode] CompiledModels."""
        return [self.device.compiled[id(m)] for m in self.device.modules]

    def new_cache(self, batch: int, tokens: int, store=None) -> DeviceKVCache:
        from buda_runtime_sim.runtime.generation import device_cache

        if batch != self.batch or tokens > self.cache_len:
            raise ValueError(f"TTDeviceDecoder was compiled for {self.batch} sequence(s) of up to {self.cache_len} "
                             f"tokens; this generate call needs {batch} of up to {tokens} (beams and returned "
                             "sequences count as sequences)")
        return DeviceKVCache(device_cache(self.device), self.names, batch, self.cache_len, len(self.layout))

    def step(self, cache: DeviceKVCache, input_ids, attention_mask=None, position_ids=None) -> torch.Tensor:
        from .step_inputs import step_inputs

        batch, tokens = input_ids.shape
        start = cache.length
        program = DECODE if tokens == 1 else PREFILL
        step_len = self.step_modules[program].step_len
        if program == PREFILL and (start != 0 or tokens > step_len):
            raise ValueError(f"TTDeviceDecoder: a prompt of {tokens} tokens at slot {start}; the prefill program takes "
                             f"up to {step_len} tokens at the start of the cache (write_index counts whole steps)")
        inputs = step_inputs(input_ids, attention_mask, position_ids, start, step_len, self.cache_len)
        self.device.set_active_subgraph(program)
        self.device.push_to_inputs(inputs)
        self.device.generate(loop_count=1, write_index=start // step_len)
        logits = self.output_queue.get()[0].to_framework("pytorch")
        cache.advance(tokens)
        self.steps += 1
        return logits[:, :tokens]

    def perf(self, device_config: str | None = None):
        """Prefill and per-token times from the perf model (tvm_buda.generation.perf), on the device's
        board unless `device_config` names another."""
        from .perf import generation_perf

        return generation_perf(*self.compiled, device_config=device_config or self.device.board_name)


def _only_through_generate(*args, **kwargs):
    raise RuntimeError("TTDeviceDecoder: this model's forward runs on the TTDevice only inside generate, with the "
                       "device's KV cache (use_cache must stay on)")
