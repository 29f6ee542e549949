"""`tvm-buda sweep MODEL...`: models x formats x fidelities x boards on Dask, resumable, with a report."""

from __future__ import annotations

from pathlib import Path


def _sweep(args) -> int:
    from .sweep import sweep

    try:
        table = sweep(args.models, args.formats, args.fidelity, args.device_config, out=args.out,
                      workers=args.workers, scheduler=args.scheduler, timeout=args.timeout,
                      memory_limit=args.memory_limit, allowed_failures=args.allowed_failures,
                      jobs_per_process=args.jobs_per_process, threads_per_job=args.threads_per_job,
                      redo_failed=args.redo_failed, progress=not args.quiet)
    except KeyboardInterrupt:
        print(f"\ninterrupted: every finished job is in {Path(args.out) / 'jobs'}; run the same command again "
              "to finish the rest")
        raise
    summary = ", ".join(f"{count} {status}" for status, count in sorted(table.summary().items()))
    print(f"{len(table)} jobs: {summary}")
    print(f"results: {Path(args.out) / 'results.csv'}\nreport:  {Path(args.out) / 'index.html'}")
    return 0


def add_sweep_command(sub) -> None:
    p = sub.add_parser("sweep", help="compile and run many models x formats x fidelities x boards on Dask",
                       description="MODEL: a `tvm-buda demo` model (mlp, onnx_mlp, ...), hf:<model_type> (a tiny "
                                   "random transformers model, offline), hf:<model_type>@config.json, a model file "
                                   "(.onnx, .tflite, .pt2, SavedModel dir, or a .py defining build_model()), or "
                                   "catalogue:<name> (demo, transformers, transformers-all). Finished jobs in --out "
                                   "are reused; the report is OUT/results.csv and OUT/index.html.")
    p.add_argument("models", nargs="+", metavar="MODEL")
    p.add_argument("--formats", help="data formats, comma-separated (default Float16_b)")
    p.add_argument("--fidelity", help="math fidelities, comma-separated: LoFi,HiFi2,HiFi3,HiFi4 (default HiFi3)")
    p.add_argument("--device-config", help="boards for the perf estimate, comma-separated (default wh_n150)")
    p.add_argument("--workers", type=int, help="LocalCluster worker processes (default: cores / threads per job)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="use a running Dask cluster (tcp://host:8786) instead")
    p.add_argument("--out", default="sweep", help="results directory (default sweep/); share it between machines")
    p.add_argument("--timeout", type=float, help="seconds per job; a job over it is recorded as TIMEOUT")
    p.add_argument("--memory-limit", help="memory per worker and per job, e.g. 4GiB (default 4GiB)")
    p.add_argument("--allowed-failures", type=int,
                   help="worker deaths one job may cause before it is recorded as CRASH (default 2)")
    p.add_argument("--jobs-per-process", type=int, default=25,
                   help="jobs a job process runs before a fresh one replaces it (1: a process per job)")
    p.add_argument("--threads-per-job", type=int, default=1, help="threads each job may use (default 1)")
    p.add_argument("--redo-failed", action="store_true", help="run ERROR, CRASH and TIMEOUT jobs again")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_sweep)
