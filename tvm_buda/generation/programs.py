"""Compiling DecoderSteps and running them against a past cache held by the runtime.

A program is a DecoderStep compiled once for its static shapes (batch, step length, cache slots), with
its past-cache inputs linked to its new-key/value outputs (`loopback_outputs`, set on a copy of the
compiler config: the user's global config is never touched). `StepPrograms` keeps one per shape;
`run_program` feeds one the host inputs plus the cache buffers of a PastCache and has the runtime write
the step's new keys/values into those buffers.
"""

from __future__ import annotations

import torch

from .step import DecoderStep


def loopback_links(step: DecoderStep) -> dict[str, int]:
    """past_i <- output 1 + i (output 0 is the logits)."""
    return {f"past_{i}": 1 + i for i in range(2 * len(step.layout))}


def step_config(step: DecoderStep, config=None):
    """A copy of `config` (default: the global one) whose loopback links are this step's."""
    from buda_runtime_sim.config import _get_global_compiler_config

    config = (config or _get_global_compiler_config()).copy()
    config.loopback_outputs = loopback_links(step)
    return config


def program_name(model, batch: int, step_len: int, cache_len: int) -> str:
    kind = "decode" if step_len == 1 else f"prefill{step_len}"
    return f"{type(model).__name__.lower()}_{kind}_b{batch}_c{cache_len}"


class StepPrograms:
    """Compiled DecoderSteps of one model by (batch, step length, cache slots), compiled on first use."""

    def __init__(self, model, layout: list, config=None):
        self.model, self.layout, self.config = model, layout, config
        self.compiled: dict[tuple[int, int, int], object] = {}

    def get(self, batch: int, step_len: int, cache_len: int):
        key = (int(batch), int(step_len), int(cache_len))
        compiled = self.compiled.get(key)
        if compiled is None:
            import tvm_buda

            step = DecoderStep(self.model, *key, self.layout)
            module = tvm_buda.PyTorchModule(program_name(self.model, *key), step)
            compiled = tvm_buda.compile_model(module, step.sample_inputs(), config=step_config(step, self.config))
            compiled.step_module = step
            self.compiled[key] = compiled
        return compiled


def run_program(store, compiled, inputs: tuple, start: int) -> torch.Tensor:
    """Run `compiled` on `inputs` (the host inputs) and the cache buffers of `store` (a PastCache); its new
    keys/values are written from slot `start`. Returns the logits."""
    outputs = store.step(compiled, lambda values: compiled.run(*values), inputs, None, None, -1, start=start)
    return torch.as_tensor(outputs[0])
