"""GPT2Generator: greedy decoding of a GPT-2 LM on a TTDevice, the docs/generation.md recipe in one class.

Two programs are placed on one TTDevice: a prefill step over a padded prompt of `prompt_len`
tokens and a decode step of one token, both against a past cache of `cache_len` positions
(GPT2CacheStep). Each is compiled once (static shapes). The past keys/values are linked
(`loopback_outputs`) so the device keeps them between steps and writes each step's new ones at
its write index; the host sends token ids, positions and the attention bias, and reads logits.
"""

from __future__ import annotations

import torch

from .gpt2 import GPT2CacheStep, attention_bias

PREFILL, DECODE = 0, 1  # active-subgraph indices of the two programs


class GPT2Generator:
    def __init__(self, model, prompt_len: int, cache_len: int, device_name: str = "tt0"):
        import pybuda

        if type(model).__name__ != "GPT2LMHeadModel":
            raise NotImplementedError(f"GPT2Generator takes a transformers GPT2LMHeadModel, not {type(model).__name__}; "
                                      "other decoders need their own cache step (see tvm_buda/generation/gpt2.py)")
        positions = model.config.n_positions
        if not 0 < prompt_len <= cache_len <= positions:
            raise ValueError(f"GPT2Generator: need 0 < prompt_len ({prompt_len}) <= cache_len ({cache_len}) <= the "
                             f"model's n_positions ({positions})")
        from buda_runtime_sim.runtime.devices import registered_devices

        busy = [d.name for d in registered_devices() if d.active and d.modules]
        if busy:
            raise RuntimeError(f"GPT2Generator places its programs on a new TTDevice, but device(s) {busy} already "
                               "form the pipeline (devices run in creation order); call pybuda.shutdown() first")
        self.model = model.eval()
        self.prompt_len, self.cache_len = int(prompt_len), int(cache_len)
        prefill = GPT2CacheStep(model, cache_len, prompt_len)
        self.steps = [prefill, GPT2CacheStep(model, cache_len, 1, lm_head_weight=prefill.lm_head_weight)]
        self.device = pybuda.TTDevice(device_name, module=[
            pybuda.PyTorchModule("gpt2_prefill", self.steps[PREFILL]),
            pybuda.PyTorchModule("gpt2_decode", self.steps[DECODE])])
        # past_i <- output 1+i, for this device's compiles only (the global config stays the user's)
        self.device.config_overrides["loopback_outputs"] = {f"past_{i}": 1 + i for i in range(2 * prefill.num_layers)}
        for index, step in enumerate(self.steps):  # compile each program once, past caches in its sample inputs
            self.device.set_active_subgraph(index)
            self.output_queue = pybuda.initialize_pipeline(training=False, sample_inputs=step.sample_inputs())

    @property
    def compiled(self) -> list:
        """[prefill, decode] CompiledModels."""
        return [self.device.compiled[id(m)] for m in self.device.modules]

    def generate(self, input_ids: torch.Tensor, max_new_tokens: int) -> torch.Tensor:
        """Greedy decoding as `model.generate(input_ids, do_sample=False, max_new_tokens=...)`:
        returns [1, prompt + new] token ids (stops early at the model's eos token)."""
        return greedy_decode(self._run, input_ids, max_new_tokens, self.prompt_len, self.cache_len,
                             eos_ids(self.model))

    def _run(self, program: int, inputs: tuple, write_index: int) -> torch.Tensor:
        self.device.set_active_subgraph(program)
        self.device.push_to_inputs(inputs)
        self.device.generate(loop_count=1, write_index=write_index)
        return self.output_queue.get()[0].to_framework("pytorch")

    def perf(self, device_config: str | None = None):
        """Tokens/s and time per token from the perf model (tvm_buda.generation.perf), on the
        device's board unless `device_config` names another."""
        from .perf import generation_perf

        return generation_perf(*self.compiled, device_config=device_config or self.device.board_name)


def greedy_decode(run, input_ids, max_new_tokens: int, prompt_len: int, cache_len: int, eos: set) -> torch.Tensor:
    """The greedy loop over a prefill and a decode program: run(program, (ids, positions, bias),
    write_index) runs one step (the program writes its keys/values at write_index) and returns
    its logits [1, T, vocab]. The prompt is right-padded to prompt_len and fills slot 0 (positions
    [0, prompt_len)); each decoded token is written at its own position."""
    n = _check_prompt(input_ids, prompt_len)
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) \
            or max_new_tokens < 1 or n + max_new_tokens - 1 > cache_len:
        raise ValueError(f"max_new_tokens={max_new_tokens}: a {n}-token prompt leaves room for 1 to "
                         f"{cache_len - n + 1} new tokens in a cache of {cache_len} positions")
    valid = torch.zeros(cache_len, dtype=torch.bool)
    ids = torch.zeros((1, prompt_len), dtype=torch.int64)
    ids[0, :n] = input_ids[0]
    positions = torch.arange(prompt_len).unsqueeze(0)
    logits = run(PREFILL, (ids, positions, attention_bias(valid, prompt_len, n)), 0)
    tokens = [int(logits[0, n - 1].argmax())]
    valid[:n] = True
    for position in range(n, n + max_new_tokens - 1):
        if tokens[-1] in eos:
            break
        step = (torch.tensor([[tokens[-1]]]), torch.tensor([[position]]), attention_bias(valid, 1))
        logits = run(DECODE, step, position)  # one token per step: the slot is its position
        valid[position] = True
        tokens.append(int(logits[0, 0].argmax()))
    return torch.cat([input_ids, torch.tensor([tokens], dtype=input_ids.dtype)], dim=1)


def _check_prompt(input_ids, prompt_len: int) -> int:
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.shape[0] != 1:
        raise ValueError("input_ids must be a [1, n] torch tensor of token ids (batch 1)")
    n = input_ids.shape[1]
    if not 0 < n <= prompt_len:
        raise ValueError(f"the prompt has {n} tokens; this generator was compiled for 1 to {prompt_len}")
    return n


def eos_ids(model) -> set[int]:
    eos = getattr(model.generation_config, "eos_token_id", None)
    return set() if eos is None else {eos} if isinstance(eos, int) else set(eos)
