"""Where simulated time goes: the top ops of one zoo model by wall time on the simulator.

    python benchmarks/profile.py MODEL [--fidelity HiFi3] [--runs 3] [--top 15]

MODEL is a zoo builder name (tests/zoo/zoo_models.py: bert_base_encoder, distilbert, gpt2_small,
resnet_cnn, ...) or resnet50 (benchmarks/cnn_models.py, 224x224, batch 1). The model is compiled once, run once to warm caches (weight conversion,
consteval, fidelity splits), then run `--runs` times with every kernel call timed. Prints, per
PyBuda op type, calls per run, median milliseconds per run and the share of the whole run; the
line "outside kernels" is the rest (Relax VM, host ops, operand conversion, dispatch).
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file's name shadows the standard library's `profile` (which cProfile, and so torch.export,
# imports) whenever benchmarks/ is on sys.path: every script here runs that way. Imported under
# that name, stand in for the real module; run as a script, take the folder off the path.
if __name__ == "profile":
    import importlib.util
    import sysconfig

    _spec = importlib.util.spec_from_file_location("profile", Path(sysconfig.get_path("stdlib")) / "profile.py")
    _stdlib_profile = importlib.util.module_from_spec(_spec)
    sys.modules["profile"] = _stdlib_profile
    _spec.loader.exec_module(_stdlib_profile)
elif sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

import argparse
import os
import statistics
import tempfile
import time
from collections import defaultdict

ROOT = Path(__file__).resolve().parent.parent


def _timed_kernels(totals: dict, counts: dict) -> None:
    """Wrap every registered kernel so its wall time is added to `totals[op_type]`."""
    from buda_runtime_sim.kernels import KERNELS

    def wrap(op_type, fn):
        def timed(inputs, attrs, numerics):
            start = time.perf_counter()
            try:
                return fn(inputs, attrs, numerics)
            finally:
                totals[op_type] += time.perf_counter() - start
                counts[op_type] += 1

        return timed

    for op_type, fn in list(KERNELS.items()):
        KERNELS[op_type] = wrap(op_type, fn)


def profile(name: str, fidelity: str | None, runs: int) -> tuple[dict, dict, float, int]:
    sys.path.insert(0, str(ROOT))
    import importlib.util

    import tvm_buda
    from buda_runtime_sim.dataformat import MathFidelity

    spec = importlib.util.spec_from_file_location("benchmarks_run", ROOT / "benchmarks" / "run.py")
    run_script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_script)
    case = run_script._case(name)   # zoo models and resnet50, as benchmarks/run.py builds them
    scratch = tempfile.TemporaryDirectory(prefix="tvm_buda_profile_")  # the generated modules: removed below
    os.chdir(scratch.name)
    compiled = tvm_buda.compile_model(case.model, case.inputs, name=name)
    if fidelity:
        compiled.exec_context.numerics.math_fidelity = MathFidelity.parse(fidelity)
    compiled.run(*case.inputs)  # warm-up: weights converted, consteval and splits cached
    per_run: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    walls = []
    _timed_kernels(totals := defaultdict(float), counts)
    for _ in range(runs):
        totals.clear()
        start = time.perf_counter()
        compiled.run(*case.inputs)
        walls.append(time.perf_counter() - start)
        for op_type, seconds in totals.items():
            per_run[op_type].append(seconds)
    medians = {op: statistics.median(v) for op, v in per_run.items()}
    os.chdir(ROOT)
    scratch.cleanup()
    return medians, {op: c // runs for op, c in counts.items()}, statistics.median(walls), runs


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="zoo builder name, e.g. bert_base_encoder, or resnet50")
    parser.add_argument("--fidelity", default=None, help="LoFi, HiFi2, HiFi3 or HiFi4 (default: the config's)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own choice)")
    args = parser.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    medians, counts, wall, runs = profile(args.model, args.fidelity, args.runs)
    print(f"{args.model}: one run {wall * 1e3:.1f} ms (median of {runs}); fidelity {args.fidelity or 'default'}\n")
    print(f"{'op type':<16}{'calls':>7}{'ms/run':>10}{'share':>8}")
    ranked = sorted(medians.items(), key=lambda kv: -kv[1])
    for op_type, seconds in ranked[: args.top]:
        print(f"{op_type:<16}{counts[op_type]:>7}{seconds * 1e3:>10.1f}{seconds / wall:>8.1%}")
    rest = wall - sum(medians.values())
    print(f"{'outside kernels':<16}{'':>7}{rest * 1e3:>10.1f}{rest / wall:>8.1%}")
    from buda_runtime_sim import bf16_gemm  # (imported where the simulator is)
    print(bf16_gemm.summary())


if __name__ == "__main__":
    main()
