"""The perf analyzer: its tables from a real perf report, the keys of the guide, CLI errors, and
one run inside tmux whose screen is read back."""

import asyncio
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from textual.widgets import DataTable, Input

from buda_runtime_sim.perf import PlacementConfig, estimate
from perf_analyzer import PerfData, main
from perf_analyzer.app import PerfAnalyzerApp
from perf_analyzer.screens import EpochScreen, HelpScreen, SummaryScreen

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from torch_op_graph import op_graph_from_torch  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


LONG_NAME = "encoder.layer.11.attention.output.a_really_long_descriptive_projection_name.matmul"


class Tower(torch.nn.Module):
    """Three matmul layers, split into epochs by the test."""

    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(256, 1024)
        self.second = torch.nn.Linear(1024, 1024)
        self.third = torch.nn.Linear(1024, 64)

    def forward(self, x):
        return self.third(torch.relu(self.second(torch.relu(self.first(x)))))


@pytest.fixture(scope="module")
def report_path(tmp_path_factory):
    graph = op_graph_from_torch(Tower(), [(128, 256)], "tower")
    matmuls = [op.name for op in graph.ops if op.op_type == "Matmul"]
    graph.ops[graph.ops.index(next(o for o in graph.ops if o.name == matmuls[2]))] = replace(
        next(o for o in graph.ops if o.name == matmuls[2]), name=LONG_NAME)   # names as long as real models'
    matmuls[2] = LONG_NAME
    report = estimate(graph, PlacementConfig("wh_n150", epoch_breaks=matmuls[1:]), microbatch=64)
    assert len(report.epochs) == 3
    return report.to_json(tmp_path_factory.mktemp("perf") / "tower_perf.json")


def test_tables_from_a_report(report_path):
    data = PerfData.load(report_path)
    epochs = data.epochs()
    assert [e.index for e in epochs] == [0, 1, 2]
    assert all(e.mm_cores > 0 and 0 < e.balancer_util <= 1 for e in epochs)
    ops = data.epoch_ops(1)
    assert [o.cycles for o in ops] == sorted((o.cycles for o in ops), reverse=True)
    assert ops[0].bounds_epoch and not any(o.bounds_epoch for o in ops[1:])
    assert ops[0].in_bw_needed >= ops[0].in_bw > 0          # running at kernel speed needs at least the actual bw


def test_keys_walk_the_epochs(report_path):
    async def drive():
        app = PerfAnalyzerApp(PerfData.load(report_path))
        async with app.run_test(size=(200, 40)) as pilot:
            assert isinstance(app.screen, SummaryScreen)
            assert app.screen.query_one(DataTable).row_count == 3
            await pilot.press("n")
            assert isinstance(app.screen, EpochScreen) and app.screen.epoch == 0
            await pilot.press("n", "n")
            assert app.screen.epoch == 2
            table = app.screen.query_one(DataTable)
            short = str(table.get_row_at(0)[0])
            assert "..." in short and len(short) <= 50
            await pilot.press("f")
            assert "..." not in str(app.screen.query_one(DataTable).get_row_at(0)[0])
            assert str(table.get_row_at(0)[-1]) == "◀ bounds epoch"
            await pilot.press("p")
            assert app.screen.epoch == 1
            await pilot.press("e")
            prompt = app.screen.query_one(Input)
            prompt.value = "9"
            await pilot.press("enter")
            assert "no epoch" in str(app.screen.query_one("#prompt-error").render())
            prompt.value = "2"
            await pilot.press("enter")
            assert isinstance(app.screen, EpochScreen) and app.screen.epoch == 2
            await pilot.press("h")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            await pilot.press("p", "p", "p")
            assert isinstance(app.screen, SummaryScreen)

    asyncio.run(drive())


def test_save_load_and_errors(report_path, tmp_path, capsys, monkeypatch):
    saved = PerfData.load(report_path).save(tmp_path / "saved.json")
    assert PerfData.load(saved).report == PerfData.load(report_path).report
    monkeypatch.chdir(tmp_path)
    assert main(["-n", "no_such_model"]) == 2
    assert "no_such_model_perf.json" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"hello": 1}')
    assert main(["--load", "bad.json"]) == 2
    assert "not a tvm-buda perf report" in capsys.readouterr().err


def test_runs_in_a_real_terminal(report_path, tmp_path):
    tmux = shutil.which("tmux")
    assert tmux, "tmux is needed for this test (.ci/run installs it)"
    session = f"perf{os.getpid()}"
    env = f"PYTHONPATH={REPO}"
    # the app must size itself from the tmux pane, not from COLUMNS/LINES a test runner may export
    command = f"cd {tmp_path} && env -u COLUMNS -u LINES {env} {sys.executable} -m pybuda.tools.perf_analysis {report_path}"
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "180", "-y", "30", command], check=True)
    try:
        screen = ""
        for _ in range(60):  # wait for the first frame
            time.sleep(0.5)
            screen = subprocess.run([tmux, "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
            if "balancer util" in screen:
                break
        assert "tower on wh_n150" in screen and "balancer util" in screen
        subprocess.run([tmux, "send-keys", "-t", session, "n"], check=True)
        for _ in range(60):
            time.sleep(0.5)
            screen = subprocess.run([tmux, "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
            if "Epoch 0" in screen:
                break
        assert "Epoch 0" in screen and "bounds epoch" in screen
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
