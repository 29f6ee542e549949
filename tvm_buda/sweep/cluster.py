"""The sweep's driver: a Dask cluster (a LocalCluster, or a running scheduler), the jobs not yet
finished submitted to it as JSON strings, and a progress bar while they run.

A worker that dies mid-job (killed, out of memory) is restarted by its nanny and the scheduler
runs the job again elsewhere; once the job has been on `allowed_failures + 1` dead workers the
scheduler gives up (KilledWorker) and the driver records it as CRASH. Ctrl-C cancels what is
queued and closes the cluster; every job that finished is already on disk (workers write them).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time

from .store import ResultStore

DEFAULT_ALLOWED_FAILURES = 2
DEFAULT_MEMORY_LIMIT = "4GiB"
FAILED = ("FAIL", "ERROR", "CRASH", "TIMEOUT")


def default_workers(threads_per_job: int = 1) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // max(1, threads_per_job))


@contextlib.contextmanager
def open_client(scheduler: str | None, workers: int, memory_limit: str, allowed_failures: int):
    """A Dask client: on `scheduler` if given, else on a LocalCluster of `workers` processes with
    one thread each (fresh spawned processes, restarted by their nannies when killed)."""
    import dask
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler, set_as_default=False) as client:
            yield client
        return
    settings = {"distributed.scheduler.allowed-failures": allowed_failures,
                "distributed.scheduler.worker-saturation": 1.0,   # a worker holds only the job it runs
                "distributed.worker.memory.spill": False, "distributed.worker.memory.target": False}
    with dask.config.set(settings):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                          dashboard_address=None, silence_logs=logging.CRITICAL,
                          # the scheduler's HTTP routes on any free port, not 8787 (two sweeps at once)
                          scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"}) as cluster, \
                Client(cluster, set_as_default=False) as client:
            yield client


def _killed_row(request: dict, exc: BaseException) -> dict:
    reason = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    return {**request["row"], "key": request["key"], "status": "CRASH",
            "error": f"every worker that ran it died, more often than the scheduler allows (KilledWorker: {reason})",
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())}


def _running(client, keys: set[str]) -> int:
    """Jobs of ours a worker is executing now (at most one per worker thread)."""
    try:
        processing = client.processing()
        threads = client.nthreads()
    except Exception:  # noqa: BLE001 - the bar is informative only; a busy scheduler must not stop the sweep
        return 0
    return sum(min(len([k for k in tasks if k in keys]), threads.get(worker, 1)) for worker, tasks in processing.items())


def run_jobs(requests: list[dict], store: ResultStore, *, scheduler: str | None, workers: int, memory_limit: str,
             allowed_failures: int, progress: bool, total: int) -> None:
    """Submit every request, wait for all of them; rows land in `store` as they finish."""
    from distributed import KilledWorker
    from tqdm import tqdm

    from .runner import run_job

    done_before = total - len(requests)
    failed = 0
    with tqdm(total=total, initial=done_before, unit="job", desc="sweep", file=sys.stderr, disable=not progress,
              dynamic_ncols=True) as bar:
        if not requests:
            return
        with open_client(scheduler, workers, memory_limit, allowed_failures) as client:
            futures = {}
            for priority, request in enumerate(requests):
                future = client.submit(run_job, json.dumps(request), key=f"sweep-job-{request['key']}", pure=False,
                                       priority=-priority)
                futures[future] = request
            keys = {f.key for f in futures}
            remaining = dict(futures)
            last_poll = 0.0
            try:
                while remaining:
                    for future in [f for f in remaining if f.done()]:
                        request = remaining.pop(future)
                        try:
                            row = json.loads(future.result())
                        except KilledWorker as exc:
                            row = _killed_row(request, exc)
                            store.write(request["key"], row)
                        failed += row["status"] in FAILED
                        bar.update(1)
                    if time.monotonic() - last_poll > 1.0:
                        last_poll = time.monotonic()
                        bar.set_postfix(running=_running(client, keys), failed=failed, refresh=True)
                    time.sleep(0.2)
                bar.set_postfix(running=0, failed=failed, refresh=True)
            except BaseException:
                client.cancel(list(remaining))
                raise
