"""What running simulated devices are doing, published for tt-smi: one small JSON state file per
live TTDevice.

A device records each run as (start time, busy seconds): while a tt-smi display or dump watches,
the perf model's estimate of the device time for a compiled model; otherwise (and for hand-written
PyBudaModules) the simulator's own run time, so unwatched runs never pay for an estimate. Files
live in TT_SMI_STATE_DIR (default: <tmp>/tvm-buda-devices-<user>), are replaced atomically, and
are removed at shutdown; files of processes that died are ignored by readers.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import tempfile
import threading
import time
import weakref
from pathlib import Path

from ..env import EnvVar

STATE_DIR = EnvVar("TT_SMI_STATE_DIR", "", "where running simulated devices publish telemetry state for tt-smi "
                   "(default: <tmp>/tvm-buda-devices-<user>)")
HISTORY = 256           # runs kept per device (enough for the thermal model's time constant)
MIN_WRITE_INTERVAL = 0.2  # seconds between state-file writes of one device

_lock = threading.Lock()


def state_dir() -> Path:
    configured = STATE_DIR.get()
    if configured:
        return Path(configured)
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in some containers
        user = str(os.getuid())
    return Path(tempfile.gettempdir()) / f"tvm-buda-devices-{user}"


class DeviceState:
    """The state file of one live device."""

    def __init__(self, name: str, arch: str, board: str, chip_ids: list[int]):
        self.path = state_dir() / f"{os.getpid()}-{id(self):x}-{_safe(name)}.json"
        self.data = {"pid": os.getpid(), "name": name, "arch": arch, "board": board, "chip_ids": list(chip_ids),
                     "created": time.time(), "runs": 0, "history": []}
        self._written = 0.0
        self.write(force=True)

    def record_run(self, start: float, busy_seconds: float) -> None:
        with _lock:
            self.data["runs"] += 1
            history = self.data["history"]
            history.append([round(start, 6), max(0.0, float(busy_seconds))])
            del history[:-HISTORY]
        self.write()

    def write(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._written < MIN_WRITE_INTERVAL:
            return
        self._written = now
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _lock:
                text = json.dumps(self.data)
            tmp = self.path.with_name(f".{self.path.name}.{threading.get_ident()}")
            tmp.write_text(text)
            os.replace(tmp, self.path)
        except OSError:  # telemetry must never break a run (read-only or full tmp)
            pass

    def close(self) -> None:
        self.write(force=True)
        try:
            self.path.unlink()
        except OSError:
            pass


def read_states(directory: Path | None = None) -> list[dict]:
    """State of every live device (files of dead processes are skipped)."""
    directory = Path(directory) if directory is not None else state_dir()
    out = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if _alive(int(data.get("pid", -1))):
            out.append(data)
    return out


def reset_states(directory: Path | None = None) -> int:
    """Warm reset: forget every device's history (devices keep running). Returns devices reset."""
    directory = Path(directory) if directory is not None else state_dir()
    count = 0
    for path in directory.glob("*.json") if directory.is_dir() else []:
        try:
            data = json.loads(path.read_text())
            if not _alive(int(data.get("pid", -1))):
                path.unlink()
                continue
            data.update(history=[], runs=0, reset=time.time())
            path.write_text(json.dumps(data))
            count += 1
        except (OSError, ValueError):
            continue
    return count


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40] or "device"


_estimates: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # compiled model -> device s per run
WATCH_PREFIX = "watching-"


def watched(directory: Path | None = None) -> bool:
    """Whether a live tt-smi display or dump is reading device state now (a marker file per reader)."""
    directory = Path(directory) if directory is not None else state_dir()
    if not directory.is_dir():
        return False
    return any(_alive(int(p.name.removeprefix(WATCH_PREFIX))) for p in directory.glob(WATCH_PREFIX + "*")
               if p.name.removeprefix(WATCH_PREFIX).isdigit())


@contextlib.contextmanager
def watching(directory: Path | None = None):
    """Mark this process as a reader of device state for the duration of the block."""
    directory = Path(directory) if directory is not None else state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / f"{WATCH_PREFIX}{os.getpid()}"
    marker.touch()
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


def busy_seconds(device, wall_seconds: float) -> float:
    """Device time of one run of `device`'s modules. While tt-smi watches: the perf model's estimate
    for compiled models (on the device's board), computed once per model. Otherwise, and for
    modules it cannot estimate, the simulator's wall time: no estimate is paid for on a run nobody
    is watching."""
    if not watched():
        return wall_seconds
    total = 0.0
    for module in device.modules:
        compiled = getattr(device, "compiled", {}).get(id(module))
        if compiled is None:
            return wall_seconds
        if compiled not in _estimates:
            try:
                _estimates[compiled] = float(compiled.perf_report(device.board_name).seconds)
            except Exception:  # noqa: BLE001 - an estimate is best effort; wall time stands in
                _estimates[compiled] = None
        estimate = _estimates[compiled]
        if estimate is None:
            return wall_seconds
        total += estimate
    return total
