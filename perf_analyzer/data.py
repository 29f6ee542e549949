"""Perf-analyzer data: a perf report (PerfReport JSON) turned into the summary and epoch tables.

Every figure is the perf model's estimate; PyBuda's analyzer showed silicon measurements beside
the estimates. Here "kernel" is an op's math-bound cycles (infinite bandwidth), "cycles" its
estimate with data movement, and "balancer util" the utilisation if every op ran at its kernel
speed: the gap between the two utilisations is what data movement costs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

SAVE_FORMAT = "tvm-buda-perf-analysis"
SAVE_VERSION = 1
SHORT_NAME = 50
LOW_UTILISATION = 0.10  # epochs below this are flagged


@dataclass(frozen=True)
class EpochSummary:
    index: int
    cycles: float            # pipeline stage: the slowest op
    speed: float             # samples/s of this epoch alone
    util: float
    mm_cores: int
    balancer_util: float
    slowest_op: str
    ops: int
    cores: int

    @property
    def flag(self) -> str:
        return "low util" if self.util < LOW_UTILISATION else ""


@dataclass(frozen=True)
class OpPerf:
    name: str
    op_type: str
    grid: str
    cycles: float            # estimate with data movement
    kernel: float            # math-bound estimate
    bound: str               # "math", or which side starves it
    in_bw_needed: float      # bytes/cycle to run at kernel speed
    out_bw_needed: float
    in_bw: float             # bytes/cycle at the estimated speed
    out_bw: float
    bounds_epoch: bool

    def short_name(self, full: bool) -> str:
        if full or len(self.name) <= SHORT_NAME:
            return self.name
        return self.name[: SHORT_NAME // 2 - 2] + "..." + self.name[-(SHORT_NAME // 2 - 1):]


class PerfData:
    """One model's perf report, loaded from a PerfReport JSON or a saved analysis file."""

    def __init__(self, report: dict, source: str = ""):
        missing = {"model", "epochs", "ops", "samples_per_second"} - set(report)
        if missing:
            raise ValueError(f"{source or 'perf data'}: not a tvm-buda perf report (missing {sorted(missing)})")
        self.report = report
        self.source = source

    @classmethod
    def load(cls, path) -> "PerfData":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read perf data ({exc})") from None
        if isinstance(data, dict) and data.get("format") == SAVE_FORMAT:
            if data.get("version") != SAVE_VERSION:
                raise ValueError(f"{path}: saved with format version {data.get('version')}, this tool reads {SAVE_VERSION}")
            data = data["report"]
        return cls(data, str(path))

    def save(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"format": SAVE_FORMAT, "version": SAVE_VERSION, "report": self.report}))
        return path

    # ---- views ------------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return self.report["model"]

    @property
    def board(self) -> str:
        board = self.report.get("board", {})
        return f"{board.get('name', '?')} ({board.get('arch', '?')})"

    @property
    def samples_per_second(self) -> float:
        return float(self.report["samples_per_second"])

    @property
    def utilisation(self) -> float:
        return float(self.report.get("math_utilisation", 0.0))

    def epochs(self) -> list[EpochSummary]:
        out = []
        for e in self.report["epochs"]:
            ops = self.epoch_ops(e["index"])
            kernel = max((o.kernel for o in ops), default=0.0)
            stage = float(e["stage_cycles"]) or 1.0
            mm = sum(_cores(o) for o in self._rows(e["index"]) if o["op_type"] == "Matmul")
            out.append(EpochSummary(e["index"], float(e["slowest_op_cycles"]), float(e["samples_per_second"]),
                                    float(e["math_utilisation"]), mm,
                                    min(1.0, float(e["math_utilisation"]) * stage / kernel) if kernel else 0.0,
                                    e["slowest_op"], int(e["ops"]), int(e["cores"])))
        return out

    def _rows(self, epoch: int) -> list[dict]:
        return [o for o in self.report["ops"] if o.get("epoch") == epoch and o.get("grid")]

    def epoch_ops(self, epoch: int) -> list[OpPerf]:
        """Ops placed in `epoch`, slowest first."""
        rows = sorted(self._rows(epoch), key=lambda o: -float(o["cycles"]))
        out = []
        for i, o in enumerate(rows):
            cycles, kernel = float(o["cycles"]) or 1.0, float(o.get("math_cycles", 0.0)) or 1.0
            bound = "math"
            if o.get("bound") == "data":
                bound = "input bw" if o.get("input_bytes", 0) >= o.get("output_bytes", 0) else "output bw"
            out.append(OpPerf(o["name"], o["op_type"], f"{o['grid'][0]}x{o['grid'][1]}", cycles, kernel, bound,
                              o.get("input_bytes", 0) / kernel, o.get("output_bytes", 0) / kernel,
                              o.get("input_bytes", 0) / cycles, o.get("output_bytes", 0) / cycles, i == 0))
        return out


def _cores(row: dict) -> int:
    return int(row["grid"][0]) * int(row["grid"][1]) if row.get("grid") else 0


def find_report(name: str, search=(".", "perf", "reportify")) -> Path:
    """`-n NAME`: a report path, or <NAME>_perf.json in the current directory, perf/ or reportify/."""
    direct = Path(name)
    if direct.is_file():
        return direct
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    for folder in map(Path, search):
        pattern = folder.glob if folder == Path(".") else folder.rglob  # never walk the whole working tree
        for candidate in sorted(pattern(f"{stem}_perf.json")) if folder.is_dir() else []:
            return candidate
    raise FileNotFoundError(f"no perf report for {name!r}: looked for {stem}_perf.json in {', '.join(search)}; "
                            "write one with compiled.perf_report().save('perf') or `tvm-buda report MODEL`")
