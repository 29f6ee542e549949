"""The perf analyzer: a terminal app over a tvm-buda perf report (PyBuda's `perf_analysis.py`).

    python -m pybuda.tools.perf_analysis -n MODEL          # finds MODEL_perf.json (., perf/, reportify/)
    python -m pybuda.tools.perf_analysis --load saved.json
    tvm-buda perf-analyzer perf/bert_perf.json

A tool beside the compiler, like tt_smi: it reads report files (JSON) and imports nothing of the
repository, so the `tvm-buda` command line and PyBuda's name (pybuda.tools.perf_analysis) both wrap it.
"""

from __future__ import annotations

import argparse
import sys

from .data import PerfData, find_report

__all__ = ["PerfData", "find_report", "main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="perf_analysis",
        description="Show a tvm-buda perf report in the terminal: per-epoch summary, then each epoch's ops "
                    "(estimates of the perf model; write a report with compiled.perf_report().save('perf')).")
    p.add_argument("report", nargs="?", help="a perf report JSON (<model>_perf.json)")
    p.add_argument("-n", "--netlist", help="model name (or report path); finds <name>_perf.json in ., perf/, reportify/")
    p.add_argument("-s", "--spatial_epochs", action="store_true",
                   help="accepted for compatibility: the simulator's epochs are already spatial (one chip per epoch)")
    p.add_argument("--save", help="save the collected data into this file (then show it)")
    p.add_argument("--load", help="load data saved with --save instead of looking for a report")
    return p


def load(args) -> PerfData:
    if args.load:
        return PerfData.load(args.load)
    target = args.report or args.netlist
    if not target:
        raise ValueError("give a report path, -n MODEL or --load FILE")
    return PerfData.load(find_report(target))


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        data = load(args)
        if args.save:
            print(f"Saved perf data to {data.save(args.save)}")
    except (ValueError, FileNotFoundError) as exc:
        print(f"perf_analysis: error: {exc}", file=sys.stderr)
        return 2
    from .app import PerfAnalyzerApp

    PerfAnalyzerApp(data).run()
    return 0
