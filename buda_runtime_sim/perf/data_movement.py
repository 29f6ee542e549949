"""How fast one core moves an op's data: NoC between ops, DRAM queues, host queues, and L1 room.

The single-op measurements (perf_data) feed every core from neighbouring cores that never
stall, so they hold no data movement. PyBuda's own balancer prices it per op and per operand
(tt-buda pybuda/csrc/balancer/policies/policy_utils.cpp, get_op_cycles_estimates, at commit
4a1e833): an op takes the slowest of its kernel cycles, the cycles to read each input operand
and the cycles to write each output, each at the bandwidth of where that data lives. The
constants below are the ones it uses, with their public sources:

- NoC, op to op: 32 bytes a cycle per link (device_config.hpp get_noc_bandwidth_bytes_per_cycle),
  halved "for a better average estimate" (inefficency_divider = 2.0): 16 bytes a cycle per core.
- DRAM queue (a tensor crossing epochs, a weight that is not resident in L1): one channel's
  measured bandwidth, divided by max(2, fork divider), where the fork divider is the number of
  cores reading DRAM at once over the channels' sub-channels (ceil(cores / (channels x
  sub-channels / 1.5))). Wormhole_B0: 20.4 bytes a cycle per channel measured (wh_dram_observed_max),
  3 sub-channels (get_dram_num_subchannels); Grayskull: 1 sub-channel, and the backend's measured
  per-channel figure is not public, so we use the board's published DRAM bandwidth over its 8
  channels at DRAM_EFFICIENCY (boards.py).
- Host queue: PCIe at 24 bytes a cycle observed (pcie_observed_max), shared by the cores reading it.
- Prologue (resident weights loaded at the start of an epoch): one channel's bandwidth halved,
  not divided among cores (dram_prologue_bw).

Epoch switch (tt-budabackend): each core of an epoch loads that epoch's binaries, FW_DRAM_BLOCK_SIZE
bytes per core (src/firmware/riscv/*/dram_address_map.h: the three TRISC kernels, 20 + 16 + 20
KiB, plus the 64 KiB overlay blob and its runtime config), from the epoch binary cache in DRAM.
That cache holds EPOCH_BIN_NUM_SLOTS = 32 epochs (src/firmware/riscv/*/epoch_q.h); a program
with more epochs cycles through it, so every epoch's binaries cross PCIe from the host again
(loader/epoch_loader.cpp, tt_epoch_binary_cache, a recency cache of that capacity).

L1: a core's 1 MiB (Grayskull) or 1464 KiB (Wormhole_B0) holds firmware and the overlay blob
before any buffer: src/firmware/riscv/*/l1_address_map.h in tt-budabackend puts the end of the
overlay blob at 204 KiB + 128 B, and src/net2pipe/inc/net2pipe_constants.h reserves 56 KiB of
stream memory per core for net2pipe. (runtime_params.cpp also reserves PIPEGEN_STREAM_MEM_PIPE_PER_CORE,
200 KiB, but PyBuda's Grayskull BERT-Large netlist keeps 557 KB of weights resident per core
for its 4x8 FFN matmul, which would not fit beside it: we leave it out.) What is left must hold
the op's buffers and, for weights kept resident (prologue), its share of them (costs.grid_cycles).
"""

from __future__ import annotations

import numpy as np

from ..enums import BackendDevice
from .boards import DRAM_EFFICIENCY, KIB, NOC_BYTES_PER_CYCLE, Board
from .memory import DRAM_CHANNELS

NOC_INEFFICIENCY = 2.0                          # policy_utils.cpp inefficency_divider
NOC_CORE_BYTES_PER_CYCLE = NOC_BYTES_PER_CYCLE / NOC_INEFFICIENCY
PCIE_BYTES_PER_CYCLE = 24.0                     # policy_utils.cpp pcie_observed_max
WH_DRAM_CHANNEL_BYTES_PER_CYCLE = 20.4          # policy_utils.cpp wh_dram_observed_max
DRAM_SUBCHANNELS = {BackendDevice.Grayskull: 1, BackendDevice.Wormhole_B0: 3}   # device_config.hpp
SUBCHANNEL_OVERSUBSCRIPTION = 1.5               # policy_utils.cpp subchannel_oversub_coeff
# Reserved L1 per worker core: runtime blob (firmware, tile headers, overlay blob: 204 KiB + 128 B)
# plus net2pipe stream memory (56 KiB).
L1_BACKEND_RESERVED_BYTES = 204 * KIB + 128 + 56 * KIB


EPOCH_BINARY_BYTES_PER_CORE = (20 + 16 + 20) * KIB + 64 * KIB     # FW_DRAM_BLOCK_SIZE, no extra blob
EPOCH_BINARY_CACHE_SLOTS = 32                                      # EPOCH_BIN_NUM_SLOTS


def epoch_switch_cycles(board: Board, cores: int, epochs: int) -> float:
    """Cycles to load one epoch's binaries onto its `cores`, in a program of `epochs` epochs."""
    nbytes = cores * EPOCH_BINARY_BYTES_PER_CORE
    cycles = nbytes / dram_bytes_per_cycle(board)
    if epochs > EPOCH_BINARY_CACHE_SLOTS:          # the binary cache thrashes: from the host again
        cycles += nbytes / PCIE_BYTES_PER_CYCLE
    return cycles


def dram_channel_bytes_per_cycle(board: Board) -> float:
    """Bytes a cycle one DRAM channel delivers (measured on Wormhole_B0, published peak elsewhere)."""
    if board.arch == BackendDevice.Wormhole_B0:
        return WH_DRAM_CHANNEL_BYTES_PER_CYCLE
    channels = DRAM_CHANNELS[board.arch][0]
    return board.dram_bytes_per_s / board.chips / channels * DRAM_EFFICIENCY / board.clock_hz


def dram_bytes_per_cycle(board: Board) -> float:
    """The whole board's DRAM: every channel of every chip at its measured rate."""
    return dram_channel_bytes_per_cycle(board) * DRAM_CHANNELS[board.arch][0] * board.chips


def dram_core_bytes_per_cycle(board: Board, cores) -> np.ndarray:
    """Bytes a cycle each of `cores` cores reading DRAM at once gets (numpy-broadcast over cores)."""
    channels = DRAM_CHANNELS[board.arch][0] * DRAM_SUBCHANNELS[board.arch] / SUBCHANNEL_OVERSUBSCRIPTION
    fork = np.maximum(1.0, np.ceil(np.asarray(cores, dtype=np.float64) / channels))
    return dram_channel_bytes_per_cycle(board) / np.maximum(NOC_INEFFICIENCY, fork)


def dram_prologue_bytes_per_cycle(board: Board) -> float:
    """Resident weights load at the start of an epoch, not divided among the reading cores."""
    return dram_channel_bytes_per_cycle(board) / NOC_INEFFICIENCY


def pcie_core_bytes_per_cycle(board: Board, cores) -> np.ndarray:
    """Host queues: PCIe's observed bytes a cycle, shared by the cores reading or writing it."""
    return PCIE_BYTES_PER_CYCLE / np.maximum(1, np.asarray(cores, dtype=np.float64))


def l1_usable_bytes(board: Board) -> int:
    """L1 a core has for an op's buffers and resident weights."""
    return board.l1_bytes - L1_BACKEND_RESERVED_BYTES


def noc_cycles(nbytes) -> np.ndarray:
    """Cycles one core needs to move `nbytes` to or from neighbouring cores."""
    return np.asarray(nbytes, dtype=np.float64) / NOC_CORE_BYTES_PER_CYCLE
