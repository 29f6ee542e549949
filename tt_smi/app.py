"""The live display: host info and compatibility in a sidebar, device info / telemetry / firmware
in three tabs, refreshed every `interval` seconds. Keys as in the TT-SMI user guide."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from buda_runtime_sim.runtime.telemetry import read_states

from . import __version__
from .info import compatibility, device_info, firmware_info, host_info
from .logs import dump, write_snapshot
from .model import limits, read_chips

TELEMETRY_COLUMNS = [("busy_pct", "Busy %"), ("aiclk_mhz", "AICLK (MHz)"), ("voltage_v", "Voltage (V)"),
                     ("current_a", "Current (A)"), ("power_w", "Power (W)"), ("asic_temp_c", "ASIC temp (°C)")]
HELP = ("1/2/3 device info / telemetry / firmware tabs   t sidebar   h this help   w telemetry limits   "
        "v telemetry averages   s snapshot   d start/stop dump   q quit\nAll figures are modelled: the devices are "
        "simulated by tvm-buda.")


class TTSmiApp(App):
    TITLE = "TT-SMI"
    SUB_TITLE = f"v{__version__} · simulated devices"
    CSS_PATH = "app.tcss"
    BINDINGS = [("1", "tab('info')", "Device info"), ("2", "tab('telemetry')", "Telemetry"),
                ("3", "tab('firmware')", "Firmware"), ("t", "toggle_sidebar", "Sidebar"), ("h", "toggle_help", "Help"),
                ("w", "toggle_limits", "Limits"), ("v", "toggle_averages", "Averages"), ("s", "snapshot", "Snapshot"),
                ("d", "toggle_dump", "Dump"), ("q", "quit", "Quit")]

    def __init__(self, interval: float = 0.5, theme_name: str = "default", no_color: bool = False,
                 device_config: str | None = None):
        if no_color:
            os.environ["NO_COLOR"] = "1"
        super().__init__()
        self.interval = interval
        self.device_config = device_config
        self.show_limits = False
        self.show_averages = False
        self._history: dict[int, list[dict]] = {}  # chip -> recent readings, for averages
        self._dump_stop: threading.Event | None = None
        self._theme_name = theme_name

    def compose(self) -> ComposeResult:
        yield Header(show_clock=True)
        with Horizontal():
            with Vertical(id="sidebar"):
                yield Static(id="host")
                yield Static(id="compat")
            with TabbedContent(initial="info", id="tabs"):
                with TabPane("Device info", id="info"):
                    yield DataTable(id="info-table")
                with TabPane("Telemetry", id="telemetry"):
                    yield DataTable(id="telemetry-table")
                with TabPane("Firmware", id="firmware"):
                    yield DataTable(id="firmware-table")
        yield Static(HELP, id="help")
        yield Footer()

    def on_mount(self) -> None:
        self.theme = "textual-light" if self._theme_name == "dark" else "textual-dark"
        self.query_one("#help").display = False
        self.query_one("#host", Static).update(_box("Host info", host_info()))
        self.refresh_readings()
        self.set_interval(self.interval, self.refresh_readings)

    # ---- data -------------------------------------------------------------------------------
    def refresh_readings(self) -> None:
        states = read_states()
        readings = read_chips(states, window=max(self.interval, 0.5), default_board=self.device_config)
        for r in readings:
            self._history.setdefault(r.chip, []).append(r.as_dict())
            del self._history[r.chip][:-120]
        self.query_one("#compat", Static).update(_box("Compatibility check", compatibility(states)))
        _fill(self.query_one("#info-table", DataTable), device_info(readings, states))
        _fill(self.query_one("#firmware-table", DataTable), firmware_info(readings))
        rows = []
        for r in readings:
            row = {"chip": r.chip, "board": r.board}
            for key, label in TELEMETRY_COLUMNS:
                row[label] = getattr(r, key)
                if self.show_averages:
                    values = [h[key] for h in self._history[r.chip]]
                    row[f"avg {label}"] = round(sum(values) / len(values), 2)
                if self.show_limits and limits(r.board).get(key) is not None:
                    row[f"limit {label}"] = limits(r.board)[key]
            rows.append(row)
        _fill(self.query_one("#telemetry-table", DataTable), rows)

    # ---- actions ----------------------------------------------------------------------------
    def action_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab

    def action_toggle_sidebar(self) -> None:
        sidebar = self.query_one("#sidebar")
        sidebar.display = not sidebar.display

    def action_toggle_help(self) -> None:
        panel = self.query_one("#help")
        panel.display = not panel.display

    def action_toggle_limits(self) -> None:
        self.show_limits = not self.show_limits
        self.refresh_readings()

    def action_toggle_averages(self) -> None:
        self.show_averages = not self.show_averages
        self.refresh_readings()

    def action_snapshot(self) -> None:
        self.notify(f"Saved snapshot to {write_snapshot(None, self.device_config)}")

    def action_toggle_dump(self) -> None:
        if self._dump_stop is None:
            self._dump_stop = threading.Event()
            stop, directory = self._dump_stop, Path("tt-smi-logs") / "tt-smi-dump_live"
            self._dump_thread = threading.Thread(target=dump, args=(directory, None, self.interval, self.device_config,
                                                                    stop), daemon=True)
            self._dump_thread.start()
            self.notify(f"Dumping telemetry to {directory}/ (press d to stop)")
        else:
            self._dump_stop.set()
            self._dump_thread.join(timeout=5)
            self._dump_stop = None
            self.notify("Telemetry dump saved")


def _box(title: str, values: dict) -> str:
    return f"[b]{title}[/b]\n" + "\n".join(f"{k}: {v}" for k, v in values.items())


def _fill(table: DataTable, rows: list[dict]) -> None:
    """Replace the table's content (columns from the first row's keys)."""
    columns = list(rows[0]) if rows else []
    if [str(c.label) for c in table.columns.values()] != columns:
        table.clear(columns=True)
        table.add_columns(*columns)
    else:
        table.clear()
    for row in rows:
        table.add_row(*(str(v) for v in row.values()))
