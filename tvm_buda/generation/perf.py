"""Tokens/s of a compiled prefill + decode pair, from the perf model.

Each program is priced as tvm_buda.perf_report prices a model, except for its past caches: they
live in device DRAM between steps (runtime/generation.py), so the cache inputs do not cross PCIe
each step and neither do the new keys/values the device writes into them. The attention ops
still read the cache tiles (the op model's data cycles). What is left out: PCIe latency per
transfer (the model charges bandwidth only) and the host's own work per token (embedding
lookups, argmax, building the attention bias).
"""

from __future__ import annotations

import dataclasses

from buda_runtime_sim.perf import PerfReport, PlacementConfig, estimate

from ..perf_report import op_graph


@dataclasses.dataclass
class GenerationPerf:
    board: str
    prefill: PerfReport
    decode: PerfReport
    cache_bytes: int               # past-cache bytes the device keeps (not moved per step)

    @property
    def seconds_per_token(self) -> float:
        """One decode step (batch 1: one token)."""
        return self.decode.seconds

    @property
    def tokens_per_second(self) -> float:
        return 1.0 / self.seconds_per_token

    def seconds_for(self, new_tokens: int) -> float:
        """Prefill (which yields the first token) plus a decode step per further token."""
        return self.prefill.seconds + (new_tokens - 1) * self.decode.seconds

    def to_dict(self) -> dict:
        return {"board": self.board, "prefill_seconds": self.prefill.seconds, "seconds_per_token": self.seconds_per_token,
                "tokens_per_second": self.tokens_per_second, "cache_bytes_on_device": self.cache_bytes,
                "decode_device_seconds": self.decode.device_seconds,
                "decode_transfer_seconds": self.decode.transfer_seconds}

    def __str__(self) -> str:
        return (f"{self.board}: prefill {self.prefill.seconds * 1e6:.1f} us, decode {self.seconds_per_token * 1e6:.1f} us"
                f"/token ({self.decode.device_seconds * 1e6:.1f} device + {self.decode.transfer_seconds * 1e6:.1f} "
                f"PCIe) = {self.tokens_per_second:,.0f} tokens/s; past cache kept on device: {self.cache_bytes:,} bytes")


def generation_perf(prefill, decode, device_config: str | None = None) -> GenerationPerf:
    """Perf of CompiledModels `prefill` and `decode` whose past caches the device holds."""
    reports = [_program_report(compiled, device_config) for compiled in (prefill, decode)]
    (prefill_report, _), (decode_report, cache_bytes) = reports
    return GenerationPerf(decode_report.board.name, prefill_report, decode_report, cache_bytes)


def _program_report(compiled, device_config):
    from buda_runtime_sim.runtime.generation import cache_inputs

    graph = op_graph(compiled)
    caches = {s.name: tuple(s.shape) for s in compiled.imported.inputs if s.name in cache_inputs(compiled)}
    locals_ = {local for sub, _ in compiled.subgraphs for kind, local, source in sub.arg_roles
               if kind == "input" and source in caches}
    kept = [t for t in graph.transfers if t.direction == "h2d" and t.label.split(":")[-1] in locals_]
    written = [t for t in graph.transfers if t.direction == "d2h" and _is_cache_slice(t.shape, caches.values())]
    written = written[-len(caches):] if caches else []   # the new keys/values: the last such outputs
    transfers = [t for t in graph.transfers if not any(t is k for k in kept + written)]
    config = PlacementConfig.from_compiler_config(compiled.config).with_options(device_config=device_config)
    report = estimate(dataclasses.replace(graph, transfers=transfers), config)
    return report, sum(t.bytes for t in kept)


def _is_cache_slice(shape, cache_shapes) -> bool:
    return any(len(shape) == len(c) and sum(a != b for a, b in zip(shape, c)) <= 1 for c in cache_shapes)
