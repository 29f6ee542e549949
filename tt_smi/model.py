"""Modelled telemetry of simulated chips, from the state files running devices publish.

No sensor exists: each figure follows from the chip's busy fraction (device time the perf model
estimates for the runs of the last `window` seconds) with simple, documented models:

- AICLK: the board's clock while busy, IDLE_AICLK_MHZ when idle (firmware drops the clock).
- Power: linear between idle (IDLE_POWER_SHARE x TDP) and TDP, per chip (a board's TDP split evenly).
- Voltage: linear between 0.80 V idle and 0.90 V at full load; current = power / voltage.
- Temperature: first-order thermal model, T = ambient + R x P filtered with time constant TAU_S;
  R is chosen so that sustained TDP settles at TDP_TEMP_C.

TDP figures are Tenstorrent's published board power (Grayskull e75 75 W, e150 200 W; Wormhole
n150 160 W, n300 300 W; docs.tenstorrent.com aibs/*/specifications). The rest are assumptions.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

from buda_runtime_sim.perf.boards import BOARDS, Board, default_board_name

TDP_W = {"gs_e75": 75.0, "gs_e150": 200.0, "wh_n150": 160.0, "wh_n300": 300.0}
IDLE_POWER_SHARE = 0.2
IDLE_AICLK_MHZ = 500.0
VOLTAGE_IDLE_V, VOLTAGE_BUSY_V = 0.80, 0.90
AMBIENT_C, TDP_TEMP_C, TAU_S = 30.0, 80.0, 20.0
LIMITS = {"aiclk_mhz": None, "voltage_v": 0.95, "power_w": None, "asic_temp_c": 90.0}


@dataclass(frozen=True)
class ChipReading:
    board: str
    arch: str
    chip: int
    busy_pct: float
    aiclk_mhz: float
    voltage_v: float
    current_a: float
    power_w: float
    asic_temp_c: float
    processes: int

    def as_dict(self) -> dict:
        return asdict(self)


def boards_in_use(states: list[dict], default: str | None = None) -> list[Board]:
    """Boards of live devices, else the `default` board (device_config), idle."""
    names = sorted({s.get("board") for s in states if s.get("board") in BOARDS})
    return [BOARDS[n] for n in names] or [BOARDS[default or default_board_name()]]


def _busy(history: list, start: float, end: float) -> float:
    """Busy seconds of runs overlapping [start, end] (a run occupies [t, t + busy])."""
    total = 0.0
    for t, busy in history:
        total += max(0.0, min(end, t + busy) - max(start, t))
    return total


def _filtered_load(history: list, now: float) -> float:
    """The busy signal low-pass filtered with time constant TAU_S (0..1)."""
    load = 0.0
    for t, busy in history:
        if t > now:
            continue
        end = min(now, t + busy)
        # integral of exp(-(now - s)/tau)/tau over the busy interval [t, end]
        load += math.exp(-(now - end) / TAU_S) - math.exp(-(now - t) / TAU_S)
    return min(1.0, load)


def read_chips(states: list[dict], now: float | None = None, window: float = 1.0,
               default_board: str | None = None) -> list[ChipReading]:
    """One reading per chip of each board in use."""
    now = time.time() if now is None else now
    readings = []
    for board in boards_in_use(states, default_board):
        tdp = chip_tdp(board.name)
        idle_w = IDLE_POWER_SHARE * tdp
        resistance = (TDP_TEMP_C - AMBIENT_C) / tdp
        for chip in range(board.chips):
            mine = [s for s in states if s.get("board") == board.name and chip in s.get("chip_ids", [0])]
            history = [h for s in mine for h in s.get("history", [])]
            busy = min(1.0, _busy(history, now - window, now) / window)
            load = _filtered_load(history, now)
            power = idle_w + (tdp - idle_w) * busy
            voltage = VOLTAGE_IDLE_V + (VOLTAGE_BUSY_V - VOLTAGE_IDLE_V) * busy
            temp = AMBIENT_C + resistance * (idle_w + (tdp - idle_w) * load)
            clock = board.clock_hz / 1e6 if busy > 0 else IDLE_AICLK_MHZ
            readings.append(ChipReading(board.name, board.arch.value, chip, round(100 * busy, 1), clock,
                                        round(voltage, 3), round(power / voltage, 2), round(power, 1),
                                        round(temp, 1), len(mine)))
    return readings


def chip_tdp(board_name: str) -> float:
    """A chip's share of its board's TDP (an n300's two chips split 300 W)."""
    return TDP_W[board_name] / BOARDS[board_name].chips


def limits(board_name: str) -> dict:
    """Telemetry limits shown with `w`: the board's clock, a chip's TDP, fixed voltage/thermal limits."""
    board = BOARDS[board_name]
    return {**LIMITS, "aiclk_mhz": board.clock_hz / 1e6, "power_w": chip_tdp(board_name)}
