"""The job process a sweep worker starts: imports tvm-buda once, then runs jobs one by one.

    python -m tvm_buda.sweep.job_host REPLY_FD PARENT_PID

Requests are JSON lines on stdin ({"spec": {...}, "log": path}); each reply is one JSON line on
REPLY_FD. While a job runs, its stdout, stderr and a crash's traceback (faulthandler) go to its
log file; it runs in a fresh temporary directory (generated modules land there and are removed).
The process dies with its worker (parent-death signal, and a watchdog thread where that is
missing), so a killed worker leaves no job running.
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path


def _die_with_parent(parent: int) -> None:
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(3)

    if os.getppid() != parent:
        os._exit(3)
    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _reset_global_state() -> None:
    """What one job may leave behind for the next (as the test suite's own isolation does)."""
    from buda_runtime_sim.config import _reset_global_compiler_config
    from buda_runtime_sim.runtime import shutdown

    shutdown()
    _reset_global_compiler_config()


def _run_one(request: dict, home: str, between_jobs: int) -> dict:
    """One job with its output in its log; between jobs, output goes to `between_jobs` again."""
    from .job import run
    from .spec import JobSpec

    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    try:
        with tempfile.TemporaryDirectory(prefix="sweep-job-") as workdir:
            os.chdir(workdir)
            try:
                return run(JobSpec.from_json(request["spec"]), Path(workdir))
            finally:
                os.chdir(home)
                _reset_global_state()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(between_jobs, 1)
        os.dup2(between_jobs, 2)


def _run_one_or_error(request: dict, home: str, between_jobs: int) -> dict:
    """A failure of the sweep's own code around a job (a broken import, an unreadable spec) is an
    ERROR row saying so, for every job alike, not a dead process reported as CRASH."""
    try:
        return _run_one(request, home, between_jobs)
    except Exception as exc:  # noqa: BLE001 - the reply must come, whatever failed
        import traceback

        traceback.print_exc()   # between jobs: the job process's own output
        line = (str(exc).strip().splitlines() or [""])[0][:300]
        return {"stage": "sweep", "status": "ERROR", "error": f"tvm-buda sweep failed: {type(exc).__name__}: {line}"}


def main(argv: list[str]) -> int:
    reply_fd, parent = int(argv[0]), int(argv[1])
    _die_with_parent(parent)
    os.dup2(2, 1)                       # model code that prints must not write into the replies
    faulthandler.enable(file=sys.stderr, all_threads=True)
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    import tvm_buda  # noqa: F401  (TVM and the frontends' common parts: imported once for every job)

    home, between_jobs = os.getcwd(), os.dup(2)
    with os.fdopen(reply_fd, "w", buffering=1) as reply:
        reply.write(json.dumps({"ready": os.getpid()}) + "\n")
        for line in sys.stdin:
            if line.strip():
                reply.write(json.dumps(_run_one_or_error(json.loads(line), home, between_jobs)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
