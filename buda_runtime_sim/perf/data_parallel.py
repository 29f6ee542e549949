"""Data parallel over the chips of a board: every chip runs the whole model on its share of the batch.

The chips compute at the same time, so the device time is one chip's time for its share. What
the split costs: every chip's inputs and outputs cross the board's one PCIe link (only the first
chip has PCIe, so they queue one after another), and a chip k hops from it receives its inputs
and returns its outputs over k Ethernet hops (chips.py), store-and-forward before and after its
compute. Nothing else is shared (each chip has its own DRAM and weights).

    time per microbatch = device(share) + chips per PCIe link x PCIe(share) + Ethernet(share, farthest hops)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .chips import transfer_seconds
from .report import PerfReport


@dataclass
class DataParallelReport:
    chips: int
    microbatch: int                     # all chips together
    per_chip: PerfReport                # one chip, its share of the microbatch
    one_chip: PerfReport                # one chip doing the whole microbatch (the reference)
    device_seconds: float
    pcie_seconds: float
    ethernet_seconds: float
    samples_per_second: float

    @property
    def seconds(self) -> float:
        return self.device_seconds + self.pcie_seconds + self.ethernet_seconds

    @property
    def speedup(self) -> float:
        """Throughput over one chip's: `chips` at best, less what the split costs."""
        return self.samples_per_second / self.one_chip.samples_per_second

    def summary(self) -> str:
        return "\n".join([
            f"{self.per_chip.model}: data parallel over {self.chips} chips of {self.one_chip.board.name}, "
            f"microbatch {self.microbatch} ({self.microbatch // self.chips} per chip)",
            f"{self.samples_per_second:,.1f} samples/s = {self.speedup:.2f}x one chip "
            f"({self.one_chip.samples_per_second:,.1f} samples/s)",
            f"per microbatch: device {1e3 * self.device_seconds:.3f} ms + PCIe (all chips through chip 0) "
            f"{1e3 * self.pcie_seconds:.3f} ms + Ethernet to the far chips {1e3 * self.ethernet_seconds:.3f} ms",
        ])

    def to_dict(self) -> dict:
        return {"chips": self.chips, "microbatch": self.microbatch, "samples_per_second": self.samples_per_second,
                "speedup": self.speedup, "device_seconds": self.device_seconds, "pcie_seconds": self.pcie_seconds,
                "ethernet_seconds": self.ethernet_seconds, "per_chip": self.per_chip.to_dict(),
                "one_chip": self.one_chip.to_dict()}


def data_parallel_report(per_chip: PerfReport, one_chip: PerfReport, chips: int, pcie_links: int = 1,
                         hops: int | None = None) -> DataParallelReport:
    """per_chip: the model on one chip at its share of the batch; one_chip: the same chip with
    `chips` times that batch (the single-chip reference). pcie_links: host links the chips share
    (an n300: 1; four n300 cards: 4); hops: Ethernet hops from a link to its farthest chip
    (default: a chain behind one link, chips - 1)."""
    if chips < 1 or pcie_links < 1:
        raise ValueError(f"data parallel needs at least one chip and one PCIe link, got {chips} and {pcie_links}")
    microbatch = per_chip.microbatch * chips
    io_bytes = per_chip.runs * sum(t.bytes for t in per_chip.transfers)
    ethernet = transfer_seconds(io_bytes, chips - 1 if hops is None else hops)
    pcie = math.ceil(chips / pcie_links) * per_chip.transfer_seconds
    total = per_chip.device_seconds + pcie + ethernet
    return DataParallelReport(chips, microbatch, per_chip, one_chip, per_chip.device_seconds, pcie, ethernet,
                              microbatch / total if total else float("inf"))
