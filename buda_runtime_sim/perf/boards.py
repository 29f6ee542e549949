"""The boards the perf model knows (PyBuda `device_config` names) and their hardware figures.

Figures are the public ones collected in spec/perf_model.md. A chip has TENSIX_ROWS worker rows
on the NoC at physical rows 1-5 and 7-11 (rows 0 and 6 hold DRAM, Ethernet, PCIe and ARC);
harvesting fuses off whole worker rows, so a harvested-rows mask shrinks the core grid.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..enums import BackendDevice

HARVESTABLE_ROWS = (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)  # physical NoC rows that hold worker cores
TENSIX_ROWS = len(HARVESTABLE_ROWS)
KIB, MIB, GB = 1024, 1024 * 1024, 1e9

# Host link (PCIe Gen4 x16), measured DMA rates; every host<->device transfer pays these.
PCIE_H2D_BYTES_PER_S = 24 * GB
PCIE_D2H_BYTES_PER_S = 11 * GB
DRAM_EFFICIENCY = 0.92          # fraction of peak DRAM bandwidth reachable in practice
NOC_BYTES_PER_CYCLE = 32        # one NoC link, per core per cycle
# Worker rows the compiler places ops on, per arch (None: every unharvested row). Wormhole_B0: 8,
# an 8x8 op grid even on a one-row-harvested n150 (9x8 workers in tt-budabackend's
# device/legacy/device/wormhole_b0_80_h1.yaml). Evidence: no epoch of the five Wormhole_B0
# netlists in perf_data/netlist_summary.md (BERT-Large, ResNet-50, MobileNetV2/V3, UNet;
# 108 epochs) occupies more than 64 cores (median 59-62), while the Grayskull ones reach the full
# 120. (Published peaks do not settle it: n150's fp8 262 TFLOPS is 64 cores' worth, its
# bfp8 148 / fp16 74 are 72 cores'; peak_tflops keeps every worker core.)
OP_GRID_ROWS = {BackendDevice.Wormhole_B0: 8}


@dataclass(frozen=True)
class Board:
    """One board: `chips` identical chips, each a grid of worker cores."""

    name: str
    arch: BackendDevice
    chips: int
    grid_cols: int
    harvested_rows: tuple[int, ...]     # physical NoC rows fused off, the same on every chip
    clock_hz: float
    l1_bytes: int                       # per core
    dram_bytes_per_s: float             # whole board
    published_tflops: dict              # {"fp8": .., "fp16": .., "bfp8": ..} for sanity checks only

    @property
    def grid_rows(self) -> int:
        return TENSIX_ROWS - len(self.harvested_rows)

    @property
    def grid_shape(self) -> tuple[int, int]:
        """(rows, columns) of worker cores on one chip."""
        return self.grid_rows, self.grid_cols

    @property
    def cores_per_chip(self) -> int:
        return self.grid_rows * self.grid_cols

    @property
    def cores(self) -> int:
        return self.chips * self.cores_per_chip

    @property
    def op_grid_rows(self) -> int:
        """Worker rows ops are placed on (OP_GRID_ROWS): the placer's grid, not the chip's."""
        return min(self.grid_rows, OP_GRID_ROWS.get(self.arch, self.grid_rows))

    @property
    def op_cores(self) -> int:
        """Cores ops are placed on, all chips together: the denominator of utilisation."""
        return self.chips * self.op_grid_rows * self.grid_cols

    @property
    def dram_bytes_per_cycle(self) -> float:
        return self.dram_bytes_per_s * DRAM_EFFICIENCY / self.clock_hz

    def with_harvested_rows(self, rows) -> "Board":
        """The same board with another harvesting mask (replaces the default one)."""
        return replace(self, harvested_rows=validate_harvested_rows(rows))

    def to_dict(self) -> dict:
        return {"name": self.name, "arch": self.arch.value, "chips": self.chips, "grid": list(self.grid_shape),
                "harvested_rows": list(self.harvested_rows), "clock_hz": self.clock_hz,
                "l1_bytes": self.l1_bytes, "dram_bytes_per_s": self.dram_bytes_per_s}


def validate_harvested_rows(rows) -> tuple[int, ...]:
    rows = tuple(int(r) for r in rows)
    bad = [r for r in rows if r not in HARVESTABLE_ROWS]
    if bad:
        raise ValueError(f"harvested rows {bad} are not harvestable; only rows {HARVESTABLE_ROWS} hold worker cores")
    if len(set(rows)) != len(rows):
        raise ValueError(f"harvested rows {list(rows)} name a row twice")
    if len(rows) >= TENSIX_ROWS:
        raise ValueError(f"harvesting {len(rows)} rows leaves no worker cores")
    return tuple(sorted(rows))


# Default masks for boards sold with harvested rows are representative: the fused rows differ
# from chip to chip, so pass `harvested_rows` to match a particular board.
BOARDS: dict[str, Board] = {
    "gs_e75": Board("gs_e75", BackendDevice.Grayskull, 1, 12, (10, 11), 1.0e9, 1 * MIB, 102 * GB,
                    {"fp8": 221, "fp16": 55, "bfp8": 55}),
    "gs_e150": Board("gs_e150", BackendDevice.Grayskull, 1, 12, (), 1.2e9, 1 * MIB, 118 * GB,
                     {"fp8": 332, "fp16": 83, "bfp8": 83}),
    "wh_n150": Board("wh_n150", BackendDevice.Wormhole_B0, 1, 8, (11,), 1.0e9, 1464 * KIB, 288 * GB,
                     {"fp8": 262, "fp16": 74, "bfp8": 148}),
    "wh_n300": Board("wh_n300", BackendDevice.Wormhole_B0, 2, 8, (10, 11), 1.0e9, 1464 * KIB, 576 * GB,
                     {"fp8": 466, "fp16": 131, "bfp8": 262}),
}
DEFAULT_BOARD = "wh_n150"   # PYBUDA_DEVICE_CONFIG's default: a current Wormhole card


def default_board_name() -> str:
    """The installed board the simulator acts as: PYBUDA_DEVICE_CONFIG (env.py), else wh_n150."""
    from ..env import DEVICE_CONFIG

    name = (DEVICE_CONFIG.get() or DEFAULT_BOARD).lower()
    if name not in BOARDS:
        raise ValueError(f"PYBUDA_DEVICE_CONFIG={name!r} is not a board; expected one of {sorted(BOARDS)}")
    return name


def board_for_arch(arch: BackendDevice) -> str:
    """The board a device of `arch` is when no device_config names one: the installed board
    (PYBUDA_DEVICE_CONFIG) if it is of that arch, else that arch's usual board."""
    installed = default_board_name()
    if BOARDS[installed].arch == arch:
        return installed
    return "gs_e150" if arch == BackendDevice.Grayskull else "wh_n150"


def get_board(name: str | Board | None = None, harvested_rows=None) -> Board:
    """A board by `device_config` name, optionally with its own harvested-rows mask."""
    if isinstance(name, Board):
        board = name
    else:
        key = (name or default_board_name()).lower()
        if key not in BOARDS:
            raise ValueError(f"unknown device_config {name!r}; expected one of {sorted(BOARDS)}")
        board = BOARDS[key]
    return board if harvested_rows is None else board.with_harvested_rows(harvested_rows)
