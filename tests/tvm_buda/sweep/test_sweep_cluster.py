"""Sweeps on a real Dask LocalCluster with 2 worker processes: a worker SIGKILLed mid-job is
replaced and its job re-run with the same results; a second run reuses every result; a job that
raises, segfaults, hangs or keeps killing its worker becomes a row with its status."""

import csv
import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from tvm_buda.sweep import sweep
from tvm_buda.sweep.cluster import open_client

MODELS = Path(__file__).parent / "models"
ALLOWED_FAILURES = 1   # one worker death is retried, a second one makes the job a CRASH
MEASURED = ("pcc", "max_abs_error", "atol", "device_share", "device_ops", "cpu_ops", "graph_breaks",
            "samples_per_second")


@pytest.fixture(scope="module")
def scheduler():
    """One LocalCluster of 2 worker processes (configured as `tvm-buda sweep` configures its own)
    for this module's sweeps, which reach it as a running cluster (--scheduler). When it closes,
    every worker and job process it started is gone."""
    import psutil

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    started = []
    with open_client(None, 2, "4GiB", ALLOWED_FAILURES) as client:
        yield client.scheduler.address
        started = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    _wait_gone(started + [p for p in psutil.Process().children(recursive=True) if p.pid not in before])


def _cmdline(process) -> list[str]:
    import psutil

    try:
        return process.cmdline()
    except psutil.Error:
        return []


def _wait_gone(processes, seconds: float = 30) -> None:
    """Every one of `processes` ends within `seconds` (zombies awaiting their reaper count as ended)."""
    import psutil

    def running(p):
        try:
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    deadline = time.time() + seconds
    while True:
        left = [p for p in processes if running(p)
                and "resource_tracker" not in " ".join(_cmdline(p))]   # multiprocessing's, one per process
        if not left or time.time() > deadline:
            break
        time.sleep(0.2)
    assert not left, f"processes left running: {[(p.pid, _cmdline(p)) for p in left]}"


def _kill_first_starter(marker: Path, killed: list, stop: threading.Event) -> None:
    """SIGKILL the worker whose job wrote `marker` (slow_mlp.py writes it, then sleeps)."""
    while not stop.is_set():
        if marker.is_file() and marker.read_text():
            pid = int(marker.read_text())
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.1)


def test_killed_worker_is_replaced_rows_are_right_and_a_rerun_reuses_them(tmp_path, scheduler):
    slow = tmp_path / "slow_mlp.py"
    shutil.copy(MODELS / "slow_mlp.py", slow)
    out = tmp_path / "out"
    killed, stop = [], threading.Event()
    killer = threading.Thread(target=_kill_first_starter, args=(tmp_path / "started", killed, stop), daemon=True)
    killer.start()
    try:
        table = sweep(["mlp", str(slow)], fidelities="LoFi,HiFi2,HiFi4", out=out, scheduler=scheduler,
                      progress=False, allowed_failures=ALLOWED_FAILURES, timeout=300)
    finally:
        stop.set()
    assert len(killed) == 1, "the slow job never started"
    assert len(table) == 6 and table.summary() == {"PASS": 6}, str(table)
    by_job = {(r["model"], r["fidelity"]): r for r in table}
    for fidelity in ("LoFi", "HiFi2", "HiFi4"):
        plain, retried = by_job["mlp", fidelity], by_job["slow_mlp.py", fidelity]
        # slow_mlp.py is the demo's mlp with the same seed and inputs: identical numbers, whichever
        # worker ran it and however often
        assert {k: plain[k] for k in MEASURED} == {k: retried[k] for k in MEASURED}
        assert plain["max_abs_error"] <= plain["atol"] and plain["pcc"] >= 0.99
        assert plain["device_share"] == 1.0 and plain["samples_per_second"] > 0
    assert by_job["mlp", "LoFi"]["max_abs_error"] > by_job["mlp", "HiFi4"]["max_abs_error"]
    assert all(not r["worker"].endswith(f":{killed[0]}") for r in table.where(model="slow_mlp.py"))
    with open(out / "results.csv") as handle:
        csv_rows = list(csv.DictReader(handle))
    assert [(r["model"], r["fidelity"], r["status"]) for r in csv_rows] == \
        [(r["model"], r["fidelity"], "PASS") for r in table]
    assert "window.SWEEP" in (out / "data.js").read_text() and (out / "index.html").is_file()

    results = sorted((out / "jobs").glob("*/result.json"))
    assert len(results) == 6
    stamps = {p: p.stat().st_mtime_ns for p in results}
    # a scheduler nobody listens on: connecting to it would raise, so every row comes from disk
    again = sweep(["mlp", str(slow)], fidelities="LoFi,HiFi2,HiFi4", out=out, scheduler="tcp://127.0.0.1:1",
                  progress=False)
    assert again.rows == table.rows
    assert {p: p.stat().st_mtime_ns for p in results} == stamps


def test_ctrl_c_keeps_finished_results_and_the_next_run_finishes_the_rest(tmp_path, scheduler):
    """`tvm-buda sweep` in a terminal: Ctrl-C (SIGINT to its whole process group: the driver, its
    LocalCluster's nannies and workers) exits 130 with every finished result and the report on disk."""
    import subprocess
    import sys

    import psutil

    out = tmp_path / "out"
    command = [sys.executable, "-m", "tvm_buda.cli", "sweep", "mlp", "--fidelity", "LoFi,HiFi2,HiFi3,HiFi4",
               "--workers", "1", "--out", str(out), "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[3]),
                                                                       os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 600
        while not list(out.glob("jobs/*/result.json")) and time.time() < deadline and process.poll() is None:
            time.sleep(0.1)
        tree = psutil.Process(process.pid).children(recursive=True)   # worker, job process, ...
        commands = [" ".join(_cmdline(p)) for p in tree]
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, output
    assert any("tvm_buda.sweep.job_host" in command for command in commands), commands
    _wait_gone(tree)   # Ctrl-C leaves no cluster process and no job process behind
    assert "interrupted: every finished job is in" in output
    finished = sorted(out.glob("jobs/*/result.json"))
    assert 1 <= len(finished) < 4
    stamps = {p: p.stat().st_mtime_ns for p in finished}
    with open(out / "results.csv") as handle:
        assert len(list(csv.DictReader(handle))) == len(finished)
    data = json.loads((out / "data.js").read_text().removeprefix("window.SWEEP = ").rstrip(";\n"))
    assert data["total"] == 4 and len(data["rows"]) == len(finished)

    table = sweep(["mlp"], fidelities="LoFi,HiFi2,HiFi3,HiFi4", out=out, scheduler=scheduler, progress=False)
    assert table.summary() == {"PASS": 4}
    assert {p: p.stat().st_mtime_ns for p in finished} == stamps   # the finished ones were not run again


def test_raise_segfault_timeout_and_worker_killer_become_rows(tmp_path, scheduler):
    out = tmp_path / "out"
    models = [str(MODELS / name) for name in ("raises.py", "segfaults.py", "sleeps.py", "kills_worker.py")]
    # 30 s: far beyond what the other three need on a loaded machine, and within the time the
    # worker killer's two worker restarts take on the other worker anyway
    table = sweep(models, out=out, scheduler=scheduler, progress=False, timeout=30, allowed_failures=ALLOWED_FAILURES)
    rows = {r["model"]: r for r in table}
    assert rows["raises.py"]["status"] == "ERROR"
    assert rows["raises.py"]["error"] == "RuntimeError: this model cannot be built"
    assert rows["raises.py"]["stage"] == "build"
    assert rows["segfaults.py"]["status"] == "CRASH"
    assert "SIGSEGV" in rows["segfaults.py"]["error"] and "Segmentation fault" in rows["segfaults.py"]["error"]
    assert rows["sleeps.py"]["status"] == "TIMEOUT" and "30 s timeout" in rows["sleeps.py"]["error"]
    assert rows["kills_worker.py"]["status"] == "CRASH" and "KilledWorker" in rows["kills_worker.py"]["error"]
    for row in table:   # each on disk as the row the table holds
        assert json.loads((out / "jobs" / row["key"] / "result.json").read_text()) == row
    log = (out / "jobs" / rows["raises.py"]["key"] / "log.txt").read_text()
    assert "second line not shown" in log   # the whole traceback is in the job's log
