"""Autoregressive generation on the device for transformers causal LMs: a prefill and a decode program per
model (DecoderStep, compiled once each for their static shapes), the KV cache held by the runtime between
steps (buda_runtime_sim/runtime/generation.py), transformers' own generate loop on the host.
docs/generation.md."""

from .decoder import CachedDecoder, DeviceLMForward
from .device_cache import DeviceKVCache
from .step import DecoderStep, cache_layout
from .support import static_cache_blocker
from .tt_device import TTDeviceDecoder

__all__ = ["CachedDecoder", "DecoderStep", "DeviceKVCache", "DeviceLMForward", "TTDeviceDecoder", "cache_layout",
           "static_cache_blocker"]
