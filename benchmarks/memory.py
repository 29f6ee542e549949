"""Memory kept per compile-and-drop: tvm-buda beside plain TVM, same model, same loop.

    python benchmarks/memory.py [--iterations 12]

A 2-layer MLP (1024 -> 1024 -> 1024, float32: 8 MB of weights) is compiled, run once and dropped
`--iterations` times in one process, each side in its own fresh subprocess. After every drop:
gc.collect() and malloc_trim(0) (so the figure is memory still referenced, not allocator slack),
then RSS. Growth per compile is the RSS slope after the first (warm-up) iteration.
Target: tvm-buda <= 2 MB per compile.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MB = 2.0


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _release() -> float:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass
    return _rss_mb()


def _model():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024)).eval()
    return model, torch.randn(32, 1024)


def _tvm_buda_once(model, x) -> None:
    import tvm_buda

    compiled = tvm_buda.compile_model(model, (x,), name="mlp")
    compiled.run(x)


def _plain_tvm_once(model, x) -> None:
    import torch
    import tvm
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    mod = from_exported_program(torch.export.export(model, (x,)), keep_params_as_input=False)
    executable = tvm.compile(mod, target="llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    vm["main"](tvm.runtime.tensor(x.numpy()))


def child(kind: str, iterations: int) -> None:
    sys.path.insert(0, str(ROOT))
    os.chdir(tempfile.mkdtemp(prefix="tvm-buda-memory-"))
    model, x = _model()
    once = _tvm_buda_once if kind == "tvm-buda" else _plain_tvm_once
    rss = []
    for _ in range(iterations):
        once(model, x)
        rss.append(_release())
    print(json.dumps({"kind": kind, "rss_mb": rss}))


def measure(kind: str, iterations: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", kind, "--iterations", str(iterations)],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if out.returncode != 0:
        raise SystemExit(f"{kind} run failed:\n{out.stderr[-3000:]}")
    rss = json.loads(out.stdout.strip().splitlines()[-1])["rss_mb"]
    per_compile = (rss[-1] - rss[0]) / max(len(rss) - 1, 1)
    return {"kind": kind, "first_mb": rss[0], "last_mb": rss[-1], "per_compile_mb": per_compile}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--child", choices=["tvm-buda", "plain-tvm"])
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.iterations)
    print(f"2-layer MLP, 8 MB of weights, {args.iterations} compile-run-drop iterations; RSS after gc + malloc_trim")
    print(f"{'':12}{'after 1st':>12}{'after last':>12}{'growth/compile':>16}")
    results = [measure(kind, args.iterations) for kind in ("tvm-buda", "plain-tvm")]
    for r in results:
        print(f"{r['kind']:12}{r['first_mb']:>10.1f}MB{r['last_mb']:>10.1f}MB{r['per_compile_mb']:>14.2f}MB")
    ours = results[0]["per_compile_mb"]
    verdict = "meets" if ours <= TARGET_MB else f"misses by {ours - TARGET_MB:.2f} MB"
    print(f"target: tvm-buda <= {TARGET_MB} MB per compile: {verdict}")


if __name__ == "__main__":
    main()
