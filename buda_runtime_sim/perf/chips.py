"""Several chips in the perf model: which chips a device uses, and what crossing chips costs.

Figures (Wormhole_B0; Grayskull has no Ethernet, so Grayskull systems are single-chip):
- A Wormhole chip has 16 Ethernet ports of 100 Gb/s [Tenstorrent, Hot Chips 33 (2021), "Wormhole"].
- The two chips of an n300 are joined on the board by 400 Gb/s ("Internal Chip-to-Chip 400GbE"),
  and cards by 2x QSFP-DD 400GbE [docs.tenstorrent.com/aibs/wormhole/specifications]. We model
  every neighbouring pair of chips as joined by ETH_PORTS_PER_NEIGHBOUR ports: 4 x 100 Gb/s,
  which is also what 16 ports give each of a mesh chip's 4 neighbours (Galaxy: 32 chips, 4x8 mesh).
- ETH_EFFICIENCY and ETH_HOP_LATENCY_S are assumptions, not published figures: packet headers
  and flow control, and the MAC/PHY/firmware time of one hop.
- Only the first chip of an n300 (and of any chain here) has PCIe; the others reach the host
  through it, one Ethernet hop per chip in between.

Topology: the chips of a device form a chain in placement order (chip i next to chip i+1), the
way the placer fills them; a tensor from chip a to chip b crosses |a - b| links, and every link
it crosses carries its bytes. Within an epoch all chips stream concurrently, so the links are
one more pipeline stage: an epoch's stage time is its slowest op, its DRAM traffic or its
busiest link, whichever is slowest, and the first run also pays the hops' latency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..enums import BackendDevice
from .boards import GB, KIB, Board
from .memory import DRAM_CHANNELS

ETH_PORT_BITS_PER_S = 100e9
ETH_PORTS_PER_NEIGHBOUR = 4
ETH_EFFICIENCY = 0.85               # assumption: headers, credits, packetisation
ETH_HOP_LATENCY_S = 1e-6            # assumption: about a microsecond per hop
ETH_LINK_BYTES_PER_S = ETH_PORT_BITS_PER_S / 8 * ETH_PORTS_PER_NEIGHBOUR * ETH_EFFICIENCY   # 42.5 GB/s
WORMHOLE_CHIP_DRAM_BYTES = math.prod(DRAM_CHANNELS[BackendDevice.Wormhole_B0])   # 12 GiB GDDR6 per chip


@dataclass(frozen=True)
class EthernetTransfer:
    """A tensor crossing chips once per run: produced by `producer` on `src_chip`, read by `consumer`."""

    epoch: int
    producer: str
    consumer: str
    src_chip: int
    dst_chip: int
    bytes: int

    @property
    def hops(self) -> int:
        return abs(self.dst_chip - self.src_chip)


def check_chip_count(board: Board, chips: int) -> None:
    if chips < 1:
        raise ValueError(f"a device needs at least one chip, got {chips}")
    if chips > board.chips:
        raise ValueError(f"{chips} chips requested but {board.name} has {board.chips}; choose num_chips <= "
                         f"{board.chips} (0 = all) or a device_config with more chips (wh_n300 has 2)")
    if chips > 1 and board.arch != BackendDevice.Wormhole_B0:
        raise ValueError(f"{board.name}: {board.arch.name} chips have no Ethernet, so one device cannot span chips; "
                         "use a Wormhole board (wh_n300) or one TTDevice per chip in a host pipeline")


def board_with_chips(board: Board, chips: int | None) -> Board:
    """The part of `board` a device uses: its first `chips` chips (DRAM bandwidth is per chip)."""
    if chips is None or chips == board.chips:
        return board
    check_chip_count(board, chips)
    return replace(board, name=f"{board.name}[{chips} of {board.chips} chips]", chips=chips,
                   dram_bytes_per_s=board.dram_bytes_per_s / board.chips * chips,
                   published_tflops={k: v / board.chips * chips for k, v in board.published_tflops.items()})


def wormhole_system(chips: int) -> Board:
    """`chips` Wormhole chips as on an n300 (8x8 workers each, 288 GB/s and 12 GB of DRAM per chip),
    chained by Ethernet: 2 = an n300, 8 = four n300 cards (a T3000-class box), 32 = Galaxy-class."""
    if chips < 1:
        raise ValueError(f"a system needs at least one chip, got {chips}")
    return Board(f"wh_x{chips}", BackendDevice.Wormhole_B0, chips, 8, (10, 11), 1.0e9, 1464 * KIB, 288 * GB * chips,
                 {"fp8": 233 * chips, "fp16": 65.5 * chips, "bfp8": 131 * chips})


def ethernet_transfers(prepared, placements) -> list[EthernetTransfer]:
    """Every producer -> consumer edge between placed ops on different chips (bytes per run, in
    the consumer's data format, as the DRAM traffic is counted). Charged to the consumer's epoch."""
    where = {pl.op: (pl.epoch, pl.chip) for pl in placements}
    ops = {p.name: p for p in prepared.placed}
    found = []
    for pl in placements:
        op = ops[pl.op]
        for producer in dict.fromkeys(op.producers):
            src = where.get(producer)
            if src is not None and src[1] != pl.chip:
                found.append(EthernetTransfer(pl.epoch, producer, pl.op, src[1], pl.chip,
                                              int(ops[producer].output_bytes(op.op.data_format))))
    return found


def link_cycles(transfers, clock_hz: float) -> dict[int, tuple[float, float]]:
    """epoch -> (cycles per run on its busiest link, latency cycles of its longest route)."""
    per_link: dict[tuple[int, int], float] = {}
    latency: dict[int, float] = {}
    for t in transfers:
        low, high = sorted((t.src_chip, t.dst_chip))
        for link in range(low, high):
            per_link[(t.epoch, link)] = per_link.get((t.epoch, link), 0.0) + t.bytes
        latency[t.epoch] = max(latency.get(t.epoch, 0.0), t.hops * ETH_HOP_LATENCY_S * clock_hz)
    busiest: dict[int, float] = {}
    for (epoch, _), nbytes in per_link.items():
        busiest[epoch] = max(busiest.get(epoch, 0.0), nbytes / ETH_LINK_BYTES_PER_S * clock_hz)
    return {e: (busiest.get(e, 0.0), latency[e]) for e in latency}


def transfer_seconds(nbytes: float, hops: int) -> float:
    """One tensor over `hops` links, store-and-forward at each chip."""
    return hops * (nbytes / ETH_LINK_BYTES_PER_S + ETH_HOP_LATENCY_S) if hops else 0.0


def check_chip_breaks(graph, chip_breaks) -> None:
    """A chip break must name an op of the model (by its full name or its op part)."""
    names = {op.name for op in graph.ops}
    short = {n.rsplit(".", 1)[-1] for n in names}
    missing = sorted(b for b in chip_breaks if b not in names and b not in short)
    if missing:
        sample = ", ".join(sorted(short)[:8])
        raise ValueError(f"set_chip_break names no op of model {graph.name!r}: {missing}; op names look like "
                         f"{sample}{', ...' if len(short) > 8 else ''} (see the perf report's op table)")


def chips_needed_for_dram(weight_bytes: float, chip_dram_bytes: int = WORMHOLE_CHIP_DRAM_BYTES) -> int:
    """Fewest chips whose DRAM holds `weight_bytes` of parameters (no room left for activations)."""
    return max(1, math.ceil(weight_bytes / chip_dram_bytes))
