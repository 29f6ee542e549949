"""What the host sends a DecoderStep: the tokens of one forward call of transformers' generate, padded to
the compiled step length, with the padding mask over the whole static cache and the slots they fill.

generate calls the forward with T new tokens, the 2-D attention mask of everything seen so far (or
None when nothing is padded) and position_ids built from that mask; the cache already holds `start`
tokens. The step is compiled for `step_len` >= T tokens: the extra tokens are written into the slots
after the real ones but masked out (attention_mask 0), and later steps overwrite them.
"""

from __future__ import annotations

import torch

PROMPT_BUCKET = 32  # multi-token steps are padded to whole tiles


def step_length(tokens: int, start: int, cache_len: int) -> int:
    """The compiled length for a call of `tokens` tokens at slot `start`: 1 for decoding, else whole
    tiles (as far as the cache allows)."""
    if tokens == 1:
        return 1
    return min(-(-tokens // PROMPT_BUCKET) * PROMPT_BUCKET, cache_len - start)


def cache_length(tokens: int) -> int:
    """Slots for a generation of up to `tokens` tokens: a power of two of at least one tile, so calls of
    similar lengths share compiled programs."""
    length = PROMPT_BUCKET
    while length < tokens:
        length *= 2
    return length


def step_inputs(input_ids: torch.Tensor, attention_mask, position_ids, start: int, step_len: int,
                cache_len: int) -> tuple[torch.Tensor, ...]:
    """(input_ids, attention_mask, position_ids, write_slots) of a DecoderStep of `step_len` tokens."""
    batch, tokens = input_ids.shape
    end = start + tokens
    if not 0 < tokens <= step_len or start + step_len > cache_len:
        raise ValueError(f"a step of {tokens} token(s) at slot {start} does not fit a {step_len}-token step against "
                         f"a cache of {cache_len} slots")
    ids = torch.zeros((batch, step_len), dtype=torch.int64)
    ids[:, :tokens] = input_ids
    mask = torch.zeros((batch, cache_len), dtype=torch.int64)
    if attention_mask is None:
        mask[:, :end] = 1
    else:
        if attention_mask.dim() != 2 or tuple(attention_mask.shape) != (batch, end):
            raise ValueError(f"attention_mask {tuple(attention_mask.shape)}: the device step takes the 2-D mask of the "
                             f"{end} tokens seen so far, [{batch}, {end}]")
        mask[:, :end] = attention_mask.to(torch.int64)
    if position_ids is None:
        position_ids = torch.arange(start, end).expand(batch, tokens)
    positions = position_ids[:, -1:].expand(batch, step_len).clone()   # padding repeats the last position
    positions[:, :tokens] = position_ids
    return ids, mask, positions.to(torch.int64), torch.arange(start, start + step_len)
