"""Host, device and firmware information for snapshots and the live display."""

from __future__ import annotations

import datetime
import platform
import socket

from buda_runtime_sim.perf.boards import BOARDS

from . import __version__
from .model import ChipReading, read_chips


def host_info() -> dict:
    return {"OS": platform.system(), "Distro": _distro(), "Kernel": platform.release(), "Hostname": socket.gethostname(),
            "Platform": platform.machine(), "Python": platform.python_version(),
            "Driver": "none: devices are simulated by tvm-buda"}


def _distro() -> str:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", "unknown")
    except OSError:
        return "unknown"


def compatibility(states: list[dict]) -> dict:
    return {"Simulator": "OK", "Live devices": str(len(states)), "Firmware": "not applicable (simulated)"}


def device_info(readings: list[ChipReading], states: list[dict]) -> list[dict]:
    rows = []
    for r in readings:
        board = BOARDS[r.board]
        owners = [f"{s['name']} (pid {s['pid']})" for s in states
                  if s.get("board") == r.board and r.chip in s.get("chip_ids", [0])]
        rows.append({"chip": r.chip, "board_type": r.board, "arch": r.arch, "bus_id": f"sim:{r.chip:02d}",
                     "grid": "x".join(map(str, board.grid_shape)), "harvested_rows": list(board.harvested_rows),
                     "dram_gb_per_s": round(board.dram_bytes_per_s / 1e9), "in_use_by": ", ".join(owners) or "idle"})
    return rows


def firmware_info(readings: list[ChipReading]) -> list[dict]:
    return [{"chip": r.chip, "board_type": r.board, "firmware": "simulated", "tt-smi": __version__,
             "eth_fw": "simulated" if r.arch == "wormhole_b0" else "n/a"} for r in readings]


def snapshot(states: list[dict], default_board: str | None = None) -> dict:
    readings = read_chips(states, default_board=default_board)
    return {"time": datetime.datetime.now().isoformat(timespec="seconds"), "tt_smi_version": __version__,
            "note": "all telemetry is modelled from simulated devices (tt_smi.model)",
            "host_info": host_info(), "compatibility": compatibility(states),
            "device_info": device_info(readings, states), "telemetry": [r.as_dict() for r in readings],
            "firmware": firmware_info(readings)}
