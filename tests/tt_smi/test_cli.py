"""tt-smi's command line: snapshot, a timed dump with the expected columns, resets, bad flags."""

import csv
import json
import subprocess
import sys

import openpyxl
import pytest

from tt_smi.logs import DUMP_COLUMNS
from tt_smi.main import main


def test_snapshot_holds_host_devices_and_telemetry(tmp_path):
    path = tmp_path / "snap.log"
    assert main(["-s", "-f", str(path), "--device-config", "wh_n300"]) == 0
    snap = json.loads(path.read_text())
    assert {"host_info", "device_info", "telemetry", "firmware", "compatibility"} <= set(snap)
    assert [d["bus_id"] for d in snap["device_info"]] == ["sim:00", "sim:01"]
    assert "modelled" in snap["note"]


def test_two_second_dump_writes_csv_and_xlsx(tmp_path):
    assert main(["-d", "-dir", str(tmp_path / "dump"), "-dur", "2", "-i", "0.5"]) == 0
    with open(tmp_path / "dump" / "telemetry.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == DUMP_COLUMNS
    assert {"busy_pct", "aiclk_mhz", "power_w", "asic_temp_c", "voltage_v", "current_a"} <= set(DUMP_COLUMNS)
    assert 3 <= len(rows) <= 6          # one chip, a reading every 0.5 s for 2 s
    sheet = openpyxl.load_workbook(tmp_path / "dump" / "telemetry.xlsx").active
    assert [c.value for c in sheet[1]] == DUMP_COLUMNS and sheet.max_row == len(rows) + 1


def test_resets_and_unsupported_flags(capsys):
    assert main(["-wr"]) == 0
    assert "Warm reset 0 simulated device(s)" in capsys.readouterr().out
    assert main(["-mr"]) == 1
    assert "simulated" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--interval", "fast"])


def test_console_script_version():
    out = subprocess.run([sys.executable, "-m", "tt_smi.main", "-v"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("tt-smi ")
