"""PerfReport: per-op rows, per-epoch summaries and the overall estimate; text, JSON and pictures."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .boards import Board
from .config import PlacementConfig
from .memory import chip_dram_bytes


@dataclass
class OpRow:
    name: str
    op_type: str
    kind: str                          # cost kind, or "tm" / "folded" for ops that take no cores
    grid: tuple[int, int] | None       # (rows, cols) of cores; None when not placed
    tiles: int                         # output tiles
    data_format: str
    math_fidelity: str
    cycles: float = 0.0                # per run, on its grid
    math_cycles: float = 0.0
    data_cycles: float = 0.0
    bound: str = ""                    # "math" or "data"
    epoch: int | None = None
    chip: int | None = None
    row: int | None = None             # top-left core of its grid
    col: int | None = None
    note: str = ""
    input_bytes: int = 0               # per run: what the op reads (tile-padded, in its format)
    output_bytes: int = 0              # per run: what it writes


@dataclass
class EpochRow:
    index: int
    subgraph: int
    ops: int
    chips: int
    cores: int
    slowest_op: str
    slowest_op_cycles: float
    dram_cycles: float
    stage_cycles: float
    fill_cycles: float
    prologue_cycles: float
    switch_cycles: float
    total_cycles: float                # all runs of the microbatch
    seconds: float
    samples_per_second: float          # if the model were only this epoch
    math_utilisation: float
    ethernet_cycles: float = 0.0       # per run, busiest chip-to-chip link


@dataclass
class ChipEpochRow:
    """One chip's share of an epoch (chips of an epoch run concurrently, as pipeline stages)."""

    epoch: int
    chip: int
    ops: int
    cores: int
    slowest_op: str
    slowest_op_cycles: float


@dataclass
class EthernetRow:
    epoch: int
    producer: str
    consumer: str
    src_chip: int
    dst_chip: int
    bytes: int                         # per run
    seconds: float                     # per microbatch, on its own (links also pipeline with compute)


@dataclass
class TransferRow:
    label: str
    direction: str                     # "h2d" or "d2h"
    bytes: int                         # per run
    seconds: float                     # per microbatch


@dataclass
class PerfReport:
    model: str
    board: Board
    config: PlacementConfig
    microbatch: int
    samples_per_run: int
    runs: int
    ops: list[OpRow]
    epochs: list[EpochRow]
    transfers: list[TransferRow]
    graph_breaks: int
    device_seconds: float
    transfer_seconds: float
    samples_per_second: float
    math_utilisation: float
    tflops: float
    chip_epochs: list[ChipEpochRow] = field(default_factory=list)
    ethernet: list[EthernetRow] = field(default_factory=list)
    chip_weight_bytes: dict = field(default_factory=dict)    # chip -> parameter bytes in its DRAM

    @property
    def seconds(self) -> float:
        """Time for one microbatch."""
        return self.device_seconds + self.transfer_seconds

    @property
    def cycles(self) -> float:
        return sum(e.total_cycles for e in self.epochs)

    def op(self, name: str) -> OpRow:
        for row in self.ops:
            if row.name == name:
                return row
        raise KeyError(f"no op {name!r} in the report")

    # ---- output -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "model": self.model, "board": self.board.to_dict(), "placement_config": self.config.to_dict(),
            "microbatch": self.microbatch, "samples_per_run": self.samples_per_run, "runs": self.runs,
            "samples_per_second": self.samples_per_second, "seconds_per_microbatch": self.seconds,
            "device_seconds": self.device_seconds, "transfer_seconds": self.transfer_seconds,
            "graph_breaks": self.graph_breaks, "math_utilisation": self.math_utilisation, "tflops": self.tflops,
            "epochs": [asdict(e) for e in self.epochs],
            "ops": [{**asdict(o), "grid": list(o.grid) if o.grid else None} for o in self.ops],
            "transfers": [asdict(t) for t in self.transfers],
            "chip_epochs": [asdict(c) for c in self.chip_epochs], "ethernet": [asdict(t) for t in self.ethernet],
            "chip_weight_bytes": {str(k): v for k, v in self.chip_weight_bytes.items()},
        }

    def to_json(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1))
        return path

    def plot(self, path) -> list[Path]:
        """One PNG per epoch: the core grid with its ops placed. `path`: a directory, or a
        "name.png" whose stem prefixes the files ("name_epoch0.png", ...)."""
        from .plot import plot_epochs

        return plot_epochs(self, path)

    def save(self, directory) -> list[Path]:
        """Everything a `tvm-buda report` leaves behind: <model>_perf.json and one PNG per epoch."""
        directory = Path(directory)
        stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in self.model) or "model"
        return [self.to_json(directory / f"{stem}_perf.json")] + self.plot(directory / f"{stem}_placement.png")

    def summary(self) -> str:
        b = self.board
        harvested = f", harvested rows {list(b.harvested_rows)}" if b.harvested_rows else ""
        if b.op_grid_rows < b.grid_rows:
            harvested += f", ops on {b.op_grid_rows}x{b.grid_cols}"
        lines = [
            f"{self.model} on {b.name} ({b.arch.value}, {b.chips}x {b.grid_rows}x{b.grid_cols} cores{harvested}, "
            f"{b.clock_hz / 1e9:g} GHz)",
            f"microbatch {self.microbatch} ({self.runs} run(s) of {self.samples_per_run}): "
            f"{self.samples_per_second:,.1f} samples/s, {len(self.epochs)} epoch(s), "
            f"math utilisation {100 * self.math_utilisation:.1f}%, {self.tflops:.2f} TFLOPS",
            f"device {1e3 * self.device_seconds:.3f} ms + host transfers {1e3 * self.transfer_seconds:.3f} ms "
            f"per microbatch; graph breaks: {self.graph_breaks}",
        ]
        lines.append(f"{'epoch':>5} {'ops':>4} {'cores':>5} {'stage cyc':>10} {'dram cyc':>9} {'fill':>9} "
                     f"{'samples/s':>11} {'util':>6}  slowest op")
        for e in self.epochs:
            lines.append(f"{e.index:>5} {e.ops:>4} {e.cores:>5} {e.stage_cycles:>10,.0f} {e.dram_cycles:>9,.0f} "
                         f"{e.fill_cycles:>9,.0f} {e.samples_per_second:>11,.1f} {100 * e.math_utilisation:>5.1f}%"
                         f"  {e.slowest_op}")
        if b.chips > 1:
            lines += self._chip_lines()
        return "\n".join(lines)

    def _chip_lines(self) -> list[str]:
        lines = [f"{'epoch':>5} {'chip':>4} {'ops':>4} {'cores':>5} {'slowest cyc':>11} {'eth cyc':>9}  slowest op"]
        eth = {e.index: e.ethernet_cycles for e in self.epochs}
        lines += [f"{c.epoch:>5} {c.chip:>4} {c.ops:>4} {c.cores:>5} {c.slowest_op_cycles:>11,.0f} "
                  f"{eth.get(c.epoch, 0.0):>9,.0f}  {c.slowest_op}" for c in self.chip_epochs]
        capacity = chip_dram_bytes(self.board)
        lines.append("weights in DRAM per chip: " + ", ".join(
            f"chip {c} {v / 1e6:,.1f} MB{' (over its ' + format(capacity / 2**30, '.0f') + ' GiB)' if v > capacity else ''}"
            for c, v in sorted(self.chip_weight_bytes.items())))
        total = sum(t.bytes for t in self.ethernet)
        lines.append(f"ethernet: {len(self.ethernet)} chip-to-chip transfer(s), {total:,} bytes/run")
        lines += [f"  epoch {t.epoch} chip {t.src_chip}->{t.dst_chip} {t.producer} -> {t.consumer}: {t.bytes:,} bytes/run, "
                  f"{1e6 * t.seconds:,.2f} us/microbatch" for t in self.ethernet]
        return lines

    def op_table(self) -> str:
        width = max([len(o.name) for o in self.ops] + [4])
        head = (f"{'op':<{width}} {'type':<13} {'grid':>6} {'tiles':>7} {'format':<9} {'fidelity':<8} "
                f"{'cycles':>10} {'bound':<5} {'epoch':>5}  note")
        lines = [head]
        for o in self.ops:
            grid = f"{o.grid[0]}x{o.grid[1]}" if o.grid else "-"
            epoch = "" if o.epoch is None else str(o.epoch)
            lines.append(f"{o.name:<{width}} {o.op_type:<13} {grid:>6} {o.tiles:>7} {o.data_format:<9} "
                         f"{o.math_fidelity:<8} {o.cycles:>10,.0f} {o.bound:<5} {epoch:>5}  {o.note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        transfers = [f"  {t.direction} {t.label}: {t.bytes:,} bytes/run, {1e6 * t.seconds:,.2f} us/microbatch"
                     for t in self.transfers]
        return "\n".join([self.summary(), "", self.op_table()] + (["", "host transfers:"] + transfers if transfers else []))
