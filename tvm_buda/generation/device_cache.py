"""DeviceKVCache: the transformers `Cache` that `generate` holds while the keys and values live on the device.

transformers' generation loop keeps a cache object between forward calls and asks it for its length,
its mask sizes and, for beam search, to reorder its sequences. This one answers like a StaticCache of
`cache_len` slots, but holds no tensors itself: the key/value buffers are the runtime's past-cache
buffers (`store`, a buda_runtime_sim PastCache, by input name), written by the device programs; the
host only tracks how many slots are filled. Reordering beams permutes those buffers along the batch.
"""

from __future__ import annotations

import numpy as np
from transformers.cache_utils import Cache, CacheLayerMixin


class DeviceLayer(CacheLayerMixin):
    is_compileable = False  # generate then passes the 2-D attention mask, which the device step takes
    is_croppable = True
    is_sliding = False

    def __init__(self, owner: "DeviceKVCache"):
        super().__init__()
        self.owner = owner
        self.batch_size = owner.batch
        self.is_initialized = True

    def lazy_initialization(self, key_states, value_states) -> None:
        pass

    def update(self, key_states, value_states, *args, **kwargs):
        raise RuntimeError("DeviceKVCache: the keys and values of this cache live on the device; only the device "
                           "program of its model writes them (is the model's forward the device one?)")

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.owner.cache_len, 0

    def get_seq_length(self) -> int:
        return self.owner.length

    def get_max_length(self) -> int:
        return self.owner.cache_len

    def reset(self) -> None:
        self.owner.length = 0

    def crop(self, tokens_to_remove: int) -> None:   # the owner crops once for all layers
        pass

    def reorder_cache(self, beam_idx) -> None:       # the owner reorders once for all layers
        pass


class DeviceKVCache(Cache):
    """`batch` sequences of up to `cache_len` tokens; `store.buffers[name]` for each of `names` holds one
    layer's keys or values, [batch, heads, cache_len, head_dim] (allocated by the first program run)."""

    def __init__(self, store, names: list[str], batch: int, cache_len: int, num_layers: int):
        self.store, self.names = store, list(names)
        self.batch, self.cache_len = int(batch), int(cache_len)
        self.length = 0
        super().__init__(layers=[DeviceLayer(self) for _ in range(num_layers)])

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.length

    def advance(self, tokens: int) -> None:
        if self.length + tokens > self.cache_len:
            raise ValueError(f"DeviceKVCache: {self.length} + {tokens} tokens do not fit its {self.cache_len} slots")
        self.length += tokens

    def reset(self) -> None:
        self.length = 0

    def crop(self, tokens_to_remove: int) -> None:
        """As StaticCache: a negative count drops that many of the last tokens (their slots are rewritten)."""
        if tokens_to_remove > 0:
            raise RuntimeError("DeviceKVCache: static caches crop by a negative count of tokens to remove")
        self.length = max(0, self.length + int(tokens_to_remove))

    def reorder_cache(self, beam_idx) -> None:
        order = np.asarray(beam_idx.cpu() if hasattr(beam_idx, "cpu") else beam_idx, dtype=np.int64)
        for name in self.names:
            buffer = self.store.buffers.get(name)
            if buffer is not None:
                buffer[...] = buffer[order]

    def batch_repeat_interleave(self, repeats: int) -> None:
        raise NotImplementedError("DeviceKVCache: the device programs are compiled for one batch size; decoding "
                                  "strategies that change it mid-generation are not supported")

    batch_select_indices = batch_repeat_interleave
