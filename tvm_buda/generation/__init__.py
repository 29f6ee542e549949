"""Autoregressive generation recipes: decoder steps with an external KV cache, compiled once each,
run with TTDevice.generate (runtime: buda_runtime_sim/runtime/generation.py). docs/generation.md."""

from .decoder import GPT2Generator
from .gpt2 import GPT2CacheStep, attention_bias

__all__ = ["GPT2CacheStep", "GPT2Generator", "attention_bias"]
