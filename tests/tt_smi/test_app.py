"""The live display, driven headless with Textual's pilot: tabs, toggles, snapshot and dump keys."""

import asyncio
from pathlib import Path

from textual.widgets import DataTable, TabbedContent

from tt_smi.app import TTSmiApp


def test_live_display_keys(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    async def drive():
        app = TTSmiApp(interval=0.2, device_config="wh_n300")
        async with app.run_test(size=(160, 40)) as pilot:
            tabs = app.query_one("#tabs", TabbedContent)
            assert tabs.active == "info"
            info = app.query_one("#info-table", DataTable)
            assert info.row_count == 2                                   # n300: two chips
            await pilot.press("2")
            assert tabs.active == "telemetry"
            table = app.query_one("#telemetry-table", DataTable)
            labels = [str(c.label) for c in table.columns.values()]
            assert "Power (W)" in labels and not any(label.startswith("limit") for label in labels)
            await pilot.press("w", "v")
            labels = [str(c.label) for c in table.columns.values()]
            assert "limit Power (W)" in labels and "avg ASIC temp (°C)" in labels
            await pilot.press("3")
            assert tabs.active == "firmware"
            await pilot.press("t")
            assert not app.query_one("#sidebar").display
            await pilot.press("h")
            assert app.query_one("#help").display
            await pilot.press("s")
            await pilot.press("d")
            await pilot.pause(0.5)
            await pilot.press("d")
            await pilot.press("q")

    asyncio.run(drive())
    assert len(list(Path("tt-smi-logs").glob("tt-smi-snapshot_*.log"))) == 1
    assert (Path("tt-smi-logs") / "tt-smi-dump_live" / "telemetry.csv").is_file()
