"""What a Dask worker runs for a sweep job: `run_job(request_json) -> row_json`.

The task graph holds only this function's name and a JSON string; the worker builds everything
else. The job runs in a job process (job_host.py) the worker keeps for the next jobs, so TVM and
torch are imported once per process, not per job. A job that outlives its timeout or its memory
limit, or kills its process (a segfault), costs only that process: the worker records TIMEOUT or
CRASH and starts a fresh one. Every finished job is written to DIR/jobs/<key>/result.json here,
on the worker, the moment it finishes.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .store import ResultStore

STARTUP_TIMEOUT = 900.0     # importing TVM and torch on a loaded machine
POLL_SECONDS = 0.2
_idle: list["JobHost"] = []
_idle_lock = threading.Lock()


class HostDied(RuntimeError):
    """The job process ended without replying; the message says how (signal, exit code, memory)."""


class JobTimedOut(RuntimeError):
    pass


def _source_root() -> str:
    return str(Path(__file__).resolve().parents[2])


class JobHost:
    """One job process and the pipes to it."""

    def __init__(self, threads: int):
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TVM_NUM_THREADS"):
            env[name] = str(threads)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_source_root(), env.get("PYTHONPATH")]))
        self._startup_log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tvm_buda.sweep.job_host", str(write_fd), str(os.getpid())],
            stdin=subprocess.PIPE, stdout=self._startup_log, stderr=self._startup_log, pass_fds=(write_fd,),
            env=env, text=True, start_new_session=True)   # its own session: a terminal's Ctrl-C is the driver's
        os.close(write_fd)
        self._reply = os.fdopen(read_fd, "r")
        self.jobs_run = 0
        self._read(STARTUP_TIMEOUT, None, "starting")

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss(self) -> int:
        import psutil

        try:
            proc = psutil.Process(self.process.pid)
            return proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
        except psutil.Error:
            return 0

    def _death(self, doing: str) -> HostDied:
        code = self.process.wait()
        if code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = f"exited with code {code}"
            self._startup_log.seek(0)   # its output outside jobs: a Python error's last line, if any
            lines = self._startup_log.read().decode(errors="replace").strip().splitlines()
            if lines:
                how += f": {lines[-1][:300]}"
        return HostDied(f"job process {how} while {doing}")

    def _read(self, timeout: float | None, memory_limit: int | None, doing: str) -> dict:
        selector = selectors.DefaultSelector()
        selector.register(self._reply, selectors.EVENT_READ)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                if selector.select(POLL_SECONDS):
                    line = self._reply.readline()
                    if not line:
                        raise self._death(doing)
                    return json.loads(line)
                if not self.alive():
                    raise self._death(doing)
                if deadline is not None and time.monotonic() > deadline:
                    self.close()
                    raise JobTimedOut(f"over the {timeout:g} s timeout while {doing}")
                if memory_limit and self.rss() > memory_limit:
                    used = self.rss()
                    self.close()
                    raise HostDied(f"used {used / 2**30:.1f} GiB, over the {memory_limit / 2**30:.1f} GiB limit "
                                   f"per job, while {doing}")
        finally:
            selector.close()

    def run(self, request: dict, timeout: float | None, memory_limit: int | None) -> dict:
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._death("receiving a job") from None
        reply = self._read(timeout, memory_limit, "running the job")
        self.jobs_run += 1
        return reply

    def close(self) -> None:
        if self.alive():
            try:
                os.killpg(self.process.pid, signal.SIGKILL)   # the job's own children too
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self._reply):
            try:
                stream.close()
            except OSError:
                pass
        self._startup_log.close()


def _take_host(threads: int) -> JobHost:
    with _idle_lock:
        while _idle:
            host = _idle.pop()
            if host.alive():
                return host
            host.close()
    return JobHost(threads)


def _give_back(host: JobHost, jobs_per_process: int, memory_limit: int | None) -> None:
    if host.jobs_run >= jobs_per_process or (memory_limit and host.rss() > memory_limit // 2):
        host.close()   # a fresh process bounds what jobs leave behind
        return
    with _idle_lock:
        _idle.append(host)


def run_job(request_json: str) -> str:
    """Run one job (JSON request from the driver), write its result.json, return the row as JSON."""
    request = json.loads(request_json)
    store = ResultStore(request["dir"])
    key = request["key"]
    job_dir = store.job_dir(key)
    job_dir.mkdir(parents=True, exist_ok=True)
    log = job_dir / "log.txt"
    timeout, memory_limit = request.get("timeout"), request.get("memory_limit")
    started = time.time()
    host = None
    try:
        host = _take_host(request.get("threads", 1))
        result = host.run({"spec": request["spec"], "log": str(log)}, timeout, memory_limit)
        _give_back(host, request.get("jobs_per_process", 1), memory_limit)
    except JobTimedOut as exc:
        result = {"status": "TIMEOUT", "error": str(exc)}
    except HostDied as exc:
        if host is not None:
            host.close()
        result = {"status": "CRASH", "error": _crash_reason(str(exc), log)}
    row = {**request["row"], **result, "key": key, "wall_s": round(time.time() - started, 3),
           "worker": f"{socket.gethostname()}:{os.getpid()}",
           "finished": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())}
    store.write(key, row)
    return json.dumps(row)


def _crash_reason(reason: str, log: Path) -> str:
    """The death, with the fatal error's line from the log when the process wrote one."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return reason
    fatal = [line for line in lines if line.startswith("Fatal Python error")]
    return f"{reason} ({fatal[-1]})" if fatal else reason
