"""tt-smi's logs: a snapshot of the devices (JSON) and timed telemetry dumps (CSV, and XLSX with openpyxl).

Shared by the command line (tt_smi.main) and the live display's keys (tt_smi.app)."""

from __future__ import annotations

import csv
import datetime
import json
import threading
import time
from pathlib import Path

from buda_runtime_sim.runtime.telemetry import read_states, watching

from .info import snapshot
from .model import ChipReading, read_chips

DUMP_COLUMNS = ["timestamp"] + list(ChipReading.__dataclass_fields__)


def _stamp() -> str:
    return datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")


def write_snapshot(path: Path | None, device_config: str | None = None) -> Path:
    path = Path(path) if path else Path("tt-smi-logs") / f"tt-smi-snapshot_{_stamp()}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(snapshot(read_states(), device_config), indent=2) + "\n")
    return path


def dump(directory: Path | None, duration: float | None, interval: float, device_config: str | None = None,
         stop: threading.Event | None = None) -> list[Path]:
    """Sample telemetry every `interval` s for `duration` s (or until `stop` is set)."""
    directory = Path(directory) if directory else Path("tt-smi-logs") / f"tt-smi-dump_{_stamp()}"
    directory.mkdir(parents=True, exist_ok=True)
    stop = stop or threading.Event()
    rows, end = [], (time.monotonic() + duration) if duration is not None else None
    with watching():
        while not stop.is_set() and (end is None or time.monotonic() < end):
            now = time.time()
            stamp = datetime.datetime.fromtimestamp(now).isoformat(timespec="milliseconds")
            rows += [{"timestamp": stamp, **r.as_dict()}
                     for r in read_chips(read_states(), now, max(interval, 0.1), device_config)]
            stop.wait(interval if end is None else max(0.0, min(interval, end - time.monotonic())))
    csv_path = directory / "telemetry.csv"
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=DUMP_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    written = [csv_path]
    try:
        import openpyxl
    except ImportError:
        return written
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "telemetry"
    sheet.append(DUMP_COLUMNS)
    for row in rows:
        sheet.append([row[c] for c in DUMP_COLUMNS])
    book.save(directory / "telemetry.xlsx")
    return written + [directory / "telemetry.xlsx"]
