"""GPT-2 as a static-shape step with an external KV cache: what the device compiles for generation.

`GPT2CacheStep(model, cache_len, step_len)` runs `step_len` new tokens against a past cache of
`cache_len` positions held outside the graph. Its inputs are input_ids [1, T], position_ids
[1, T], attention_bias [1, 1, T, L + T] (0 where a key may be attended, a large negative number
where not) and one past key and one past value per layer, [1, heads, L, head_dim]; it returns the
logits [1, T, vocab] and this step's new key and value per layer, [1, heads, T, head_dim]. The
runtime writes the new keys and values into its cache buffers at the step's write index (PyBuda's
past-cache loopback), so the graph itself needs no scatter: only matmul, concat, softmax and
element-wise ops, all of which the device runs. It reuses the HF model's own submodules (weights
shared), the output projection excepted (copied, see __init__).
"""

from __future__ import annotations

import torch

MASKED = -1.0e4  # additive bias of a key that must not be attended (exp underflows to 0 in every format)


class GPT2CacheStep(torch.nn.Module):
    def __init__(self, model, cache_len: int, step_len: int, lm_head_weight: torch.nn.Parameter | None = None):
        super().__init__()
        config = model.config
        if getattr(config, "reorder_and_upcast_attn", False):
            raise NotImplementedError("GPT2CacheStep: reorder_and_upcast_attn=True is not supported")
        self.transformer = model.transformer
        # its own copy of the output projection: tied to the embedding (which stays on the host), the
        # device would be sent the transposed [vocab, n_embd] matrix over PCIe on every step
        # (another step of the same model may pass its copy in)
        self.lm_head_weight = lm_head_weight if lm_head_weight is not None else torch.nn.Parameter(
            model.lm_head.weight.detach().clone(), requires_grad=False)
        self.cache_len, self.step_len = int(cache_len), int(step_len)
        self.num_heads = config.n_head
        self.head_dim = config.n_embd // config.n_head

    @property
    def num_layers(self) -> int:
        return len(self.transformer.h)

    def cache_shape(self) -> tuple[int, ...]:
        return (1, self.num_heads, self.cache_len, self.head_dim)

    def sample_inputs(self) -> tuple[torch.Tensor, ...]:
        """Inputs of the compiled shapes (an empty cache, every past position masked)."""
        t, length = self.step_len, self.cache_len
        ids = torch.zeros((1, t), dtype=torch.int64)
        positions = torch.arange(t, dtype=torch.int64).unsqueeze(0)
        bias = attention_bias(torch.zeros(length, dtype=torch.bool), t)
        caches = [torch.zeros(self.cache_shape()) for _ in range(2 * self.num_layers)]
        return (ids, positions, bias, *caches)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(1, self.step_len, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, input_ids, position_ids, bias, *past):
        tr = self.transformer
        hidden = tr.wte(input_ids) + tr.wpe(position_ids)
        new_kv = []
        for i, block in enumerate(tr.h):
            attn = block.attn
            q, k, v = attn.c_attn(block.ln_1(hidden)).split(attn.split_size, dim=2)
            q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
            keys = torch.cat([past[2 * i], k], dim=2)
            values = torch.cat([past[2 * i + 1], v], dim=2)
            scores = torch.matmul(q, keys.transpose(-1, -2)) * attn.scaling + bias
            context = torch.matmul(torch.softmax(scores, dim=-1), values)
            context = context.transpose(1, 2).reshape(1, self.step_len, self.num_heads * self.head_dim)
            hidden = hidden + attn.c_proj(context)
            hidden = hidden + block.mlp(block.ln_2(hidden))
            new_kv += [k, v]
        logits = torch.nn.functional.linear(tr.ln_f(hidden), self.lm_head_weight)
        return (logits, *new_kv)


def attention_bias(valid_past: torch.Tensor, step_len: int, valid_step: int | None = None) -> torch.Tensor:
    """[1, 1, T, L + T]: past positions where `valid_past` (bool [L]) is set, then causal among the
    step's own T tokens (only the first `valid_step` of them are real; padding attends to itself)."""
    t = step_len
    valid_step = t if valid_step is None else valid_step
    past = torch.where(valid_past, 0.0, MASKED).expand(t, -1)
    own = torch.full((t, t), MASKED).triu(1)
    own[:, valid_step:] = MASKED
    own[valid_step:, :] = MASKED
    own.diagonal()[:] = 0.0  # every row attends at least to itself (padding rows stay finite)
    return torch.cat([past, own], dim=1).reshape(1, 1, t, -1).contiguous()
