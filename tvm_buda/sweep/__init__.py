"""Model sweeps on Dask distributed: models x data formats x fidelities x boards, resumable, with
a report. `tvm_buda.sweep(...)` (this module is callable) and `tvm-buda sweep` run one:

    table = tvm_buda.sweep(["mlp", "hf:bert"], formats="Float16_b,Bfp8_b", fidelities="LoFi,HiFi4",
                           out="sweep_out", workers=2)
    table.summary()            # {"PASS": 7, "ERROR": 1}; out/results.csv, out/index.html

Modules: spec (jobs as JSON, their keys), models (MODEL references), hf_models (tiny transformers
configs), job (one job's work), job_host (the process jobs run in), runner (what a worker runs),
store (atomic result files), cluster (the Dask driver), report (results.csv, index.html).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

from .table import SweepTable

__all__ = ["SweepTable", "plan", "sweep"]


def plan(models, formats=None, fidelities=None, device_configs=None, *, out="sweep", timeout=None,
         memory_limit=None, jobs_per_process=25, threads_per_job=1) -> list[dict]:
    """The requests of a sweep, one per job (JSON-able dicts: spec, key, row fields, limits)."""
    from dask.utils import parse_bytes

    from .cluster import DEFAULT_MEMORY_LIMIT
    from .models import display_name, expand_models, identity_and_content
    from .spec import (DEFAULT_DEVICE_CONFIGS, DEFAULT_FIDELITIES, DEFAULT_FORMATS, expand, job_key,
                       software_versions, split_list)

    references = expand_models([models] if isinstance(models, str) else list(models))
    if not references:
        raise ValueError("no models to sweep")
    specs = expand(references, split_list(formats, DEFAULT_FORMATS), split_list(fidelities, DEFAULT_FIDELITIES),
                   split_list(device_configs, DEFAULT_DEVICE_CONFIGS))
    versions = software_versions()
    identities = {ref: identity_and_content(ref) for ref in references}
    limit = parse_bytes(memory_limit or DEFAULT_MEMORY_LIMIT)
    requests = []
    for spec in specs:
        key = job_key(spec, *identities[spec.model], versions)
        row = {"model": display_name(spec.model), "data_format": spec.data_format, "fidelity": spec.fidelity,
               "device_config": spec.device_config, "tvm_buda": versions["tvm_buda"]}
        requests.append({"spec": spec.to_json(), "key": key, "row": row, "dir": str(Path(out).resolve()),
                         "timeout": timeout, "memory_limit": limit, "jobs_per_process": jobs_per_process,
                         "threads": threads_per_job})
    return requests


def sweep(models, formats=None, fidelities=None, device_configs=None, *, out="sweep", workers=None,
          scheduler=None, timeout=None, memory_limit=None, allowed_failures=None, jobs_per_process=25,
          threads_per_job=1, redo_failed=False, progress=True) -> SweepTable:
    """Run every job not already finished in `out`, write out/results.csv and out/index.html,
    and return the table of every job of this sweep.

    models: MODEL references (see tvm_buda.sweep.models); formats, fidelities, device_configs:
    names or "A,B" strings (defaults Float16_b, HiFi3, wh_n150). workers: LocalCluster processes
    (default: cores / threads_per_job); scheduler: "tcp://host:8786" of a running cluster instead.
    timeout: seconds per job (TIMEOUT row). memory_limit: per worker and per job (default 4GiB).
    allowed_failures: worker deaths a job may cause before it is recorded as CRASH (default 2).
    jobs_per_process: jobs a job process runs before a fresh one starts (1: one per job).
    redo_failed: run ERROR, CRASH and TIMEOUT jobs again (they are finished otherwise).
    On Ctrl-C the report is written for the jobs finished so far, then KeyboardInterrupt propagates.
    """
    from .cluster import DEFAULT_ALLOWED_FAILURES, DEFAULT_MEMORY_LIMIT, default_workers, run_jobs
    from .report import write_report
    from .store import ResultStore

    requests = plan(models, formats, fidelities, device_configs, out=out, timeout=timeout, memory_limit=memory_limit,
                    jobs_per_process=jobs_per_process, threads_per_job=threads_per_job)
    store = ResultStore(out)
    redo = ("ERROR", "CRASH", "TIMEOUT") if redo_failed else ()
    finished = {r["key"] for r in requests if (row := store.read(r["key"])) is not None and row["status"] not in redo}
    pending = [r for r in requests if r["key"] not in finished]
    try:
        run_jobs(pending, store, scheduler=scheduler, workers=workers or default_workers(threads_per_job),
                 memory_limit=memory_limit or DEFAULT_MEMORY_LIMIT,
                 allowed_failures=DEFAULT_ALLOWED_FAILURES if allowed_failures is None else allowed_failures,
                 progress=progress, total=len(requests))
    finally:
        rows = [row for r in requests if (row := store.read(r["key"])) is not None]
        write_report(Path(out), rows, total=len(requests))
    return SweepTable(rows)


class _CallableModule(types.ModuleType):
    """`tvm_buda.sweep(...)` is this package's `sweep(...)`."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
