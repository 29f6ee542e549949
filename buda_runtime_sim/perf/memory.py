"""Where a model's queues live: device DRAM channels and host memory channels, and how full each is.

A queue is a parameter (static: resident for the model's life), a tensor crossing epochs
(dynamic, DRAM) or a device input/output (dynamic, host memory, as PyBuda places input and
output queues on the host by default). Bytes are tile-padded, in the queue's data format.

Allocation, per PyBuda's merge tool options:
- queues go round-robin over the channels (one counter across models, so merged models spread);
- a queue that does not fit its channel moves to the emptiest channel with room when
  `switch_chans_if_capacity_hit`, else it is an error naming the queue and channel;
- models in one image never run at the same instant, so with `overlap_dynamic_queues` their
  dynamic queues share space: a channel holds the static queues of all models plus the largest
  model's dynamic queues; without it, every model's dynamic queues are added.

Channel figures (public board specs): Grayskull 8 LPDDR4 channels of 1 GiB per chip, Wormhole 6
GDDR6 channels of 2 GiB per chip. Host: 4 channels of 1 GiB (an assumption: PyBuda's host
queues live in 1 GiB hugepages, one per channel).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..enums import BackendDevice

GIB = 1 << 30
DRAM_CHANNELS = {BackendDevice.Grayskull: (8, 1 * GIB), BackendDevice.Wormhole_B0: (6, 2 * GIB)}
HOST_CHANNELS = (4, 1 * GIB)


def chip_dram_bytes(board) -> int:
    """DRAM capacity of one chip of `board`."""
    channels, size = DRAM_CHANNELS[board.arch]
    return channels * size


@dataclass
class MemoryFootprint:
    """Bytes used per channel, and where each queue went ((model, queue) -> (location, channel))."""

    dram: list[int]
    host: list[int]
    placements: dict = field(default_factory=dict)

    def summary(self) -> str:
        """PyBuda's memory profiler printout (MB per channel)."""
        lines = ["Displaying memory footprint per DRAM channel (MB):"]
        lines += [f"{i} : {b / 1e6:.2f}" for i, b in enumerate(self.dram)]
        lines.append("Displaying memory footprint per Host channel (MB):")
        lines += [f"{i} : {b / 1e6:.2f}" for i, b in enumerate(self.host)]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"dram_bytes": self.dram, "host_bytes": self.host,
                "placements": [[m, q, loc, ch] for (m, q), (loc, ch) in sorted(self.placements.items())]}


class _Channels:
    def __init__(self, count: int, capacity: int, switch: bool, where: str):
        self.static = [0] * count
        self.dynamic: dict[str, list[int]] = {}
        self.capacity, self.switch, self.where, self.next = capacity, switch, where, 0

    def used(self, overlap: bool) -> list[int]:
        dyn = list(self.dynamic.values()) or [[0] * len(self.static)]
        combine = max if overlap else sum
        return [s + combine(d[i] for d in dyn) for i, s in enumerate(self.static)]

    def put(self, model: str, queue: dict, overlap: bool) -> int:
        dynamic = queue["kind"] == "dynamic"
        row = self.dynamic.setdefault(model, [0] * len(self.static)) if dynamic else self.static
        channel = self.next
        self.next = (self.next + 1) % len(self.static)
        used = self.used(overlap)
        if used[channel] + queue["bytes"] > self.capacity:
            if not self.switch:
                raise MemoryError(f"{self.where} channel {channel} is full: queue {queue['name']} of model {model} "
                                  f"({queue['bytes']:,} bytes) does not fit; enable switch_chans_if_capacity_hit")
            free = [(self.capacity - u, c) for c, u in enumerate(used) if u + queue["bytes"] <= self.capacity]
            if not free:
                raise MemoryError(f"queue {queue['name']} of model {model} ({queue['bytes']:,} bytes) fits no "
                                  f"{self.where} channel: the models need more memory than the board has")
            channel = max(free)[1]
        row[channel] += queue["bytes"]
        return channel


def allocate(models: dict[str, list[dict]], arch: BackendDevice, chips: int = 1,
             switch_chans_if_capacity_hit: bool = True, overlap_dynamic_queues: bool = True) -> MemoryFootprint:
    """models: name -> queues ({"name", "kind": static|dynamic, "location": dram|host, "bytes"})."""
    count, capacity = DRAM_CHANNELS[arch]
    dram = _Channels(count * chips, capacity, switch_chans_if_capacity_hit, "DRAM")
    host = _Channels(HOST_CHANNELS[0], HOST_CHANNELS[1], switch_chans_if_capacity_hit, "host")
    placements = {}
    for model, queues in models.items():
        for queue in sorted(queues, key=lambda q: q["kind"] != "static"):   # static first, then dynamic
            channels = dram if queue["location"] == "dram" else host
            if channels is host:
                host.next = 0          # host queues fill channel 0 first, as in PyBuda's report
            placements[(model, queue["name"])] = (queue["location"], channels.put(model, queue, overlap_dynamic_queues))
    return MemoryFootprint(dram.used(overlap_dynamic_queues), host.used(overlap_dynamic_queues), placements)
