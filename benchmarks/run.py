"""End-to-end speed and memory of tvm-buda against the native framework and plain TVM.

    python benchmarks/run.py [MODEL ...]      (default: bert_base_encoder distilbert resnet_cnn resnet50)

Per model, each measured in a fresh subprocess so memory figures are clean:
- native framework CPU time vs simulated run time (targets: BERT-base encoder seq 128 batch 1
  within 3x of PyTorch),
- cold compile time vs plain TVM (torch.export -> Relax -> tvm.compile(target="llvm")) of the
  same model (target: within 1.5x),
- peak RSS during compile vs the framework model's own footprint + 2x its parameter bytes,
- ResNet-50 (224x224, batch 1, random weights, benchmarks/cnn_models.py): peak RSS over compile
  and runs (target <= 2.5 GB), run ratio (target <= 2.5x) and its match with PyTorch (PyBuda's rule).
Where a target is missed the script says by how much.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ["bert_base_encoder", "distilbert", "resnet_cnn", "resnet50"]
RUN_TARGETS = {"resnet50": 2.5}       # simulated / native run time; 3.0 for the others
PEAK_RSS_TARGETS_MB = {"resnet50": 2500.0}  # compile + runs
RUN_REPEATS = 5


def _case(name):
    sys.path.insert(0, str(ROOT))
    from tests.zoo import zoo_models

    if name == "resnet50":
        import torch

        sys.path.insert(0, str(ROOT / "benchmarks"))
        from cnn_models import ResNet50

        torch.manual_seed(0)
        return zoo_models._torch_case("resnet50", ResNet50(), (torch.randn(1, 3, 224, 224),))
    return getattr(zoo_models, name)()


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def _best(fn, repeats=RUN_REPEATS) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def child(kind: str, name: str) -> dict:
    """One measurement in this (fresh) process; prints a JSON line."""
    import numpy as np
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    case = _case(name)
    params = sum(p.numel() * p.element_size() for p in case.model.parameters()) if hasattr(case.model, "parameters") else 0
    base = _rss_mb()
    out = {"model": name, "param_mb": params / 1e6, "base_rss_mb": base}
    if kind == "buda":
        import tvm_buda

        os.chdir(tempfile.mkdtemp())
        start = time.perf_counter()
        compiled = tvm_buda.compile_model(case.model, case.inputs, name=name)
        out["compile_s"] = time.perf_counter() - start
        out["peak_rss_mb"] = _peak_mb()
        out["run_s"] = _best(lambda: compiled.run(*case.inputs))
        out["peak_rss_run_mb"] = _peak_mb()
        from buda_runtime_sim.verify import compare

        out["accuracy"] = str(compare(compiled.run(*case.inputs), case.golden()))
    elif kind == "tvm":
        import tvm
        from tvm import relax
        from tvm.relax.frontend.torch import from_exported_program

        start = time.perf_counter()
        with torch.no_grad():
            exported = torch.export.export(case.model, case.inputs)
        mod = from_exported_program(exported, keep_params_as_input=True, unwrap_unit_return_tuple=True)
        mod, weights = relax.frontend.detach_params(mod)
        ex = tvm.compile(mod, target="llvm")
        out["compile_s"] = time.perf_counter() - start
        vm = relax.VirtualMachine(ex, tvm.cpu())
        args = [tvm.runtime.tensor(np.ascontiguousarray(x.numpy())) for x in case.inputs] + list(weights["main"])
        out["run_s"] = _best(lambda: vm["main"](*args))
    else:  # native
        def forward():
            with torch.no_grad():
                case.model(*case.inputs)

        out["run_s"] = _best(forward)
    print(json.dumps(out))
    return out


def _measure(kind: str, name: str) -> dict:
    result = subprocess.run([sys.executable, __file__, "--child", kind, name], capture_output=True, text=True,
                            cwd=ROOT, timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(f"{kind} {name} failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _verdict(value: float, target: float, unit: str = "x") -> str:
    if value <= target:
        return f"target <= {target:g}{unit}: met"
    return f"target <= {target:g}{unit}: MISSED by {value / target:.2f}x"


def main(names: list[str]) -> None:
    print(f"{os.cpu_count()} cores; times are the best of {RUN_REPEATS} runs after a warm-up\n")
    for name in names:
        native, buda, tvm_plain = (_measure(k, name) for k in ("native", "buda", "tvm"))
        run_ratio = buda["run_s"] / native["run_s"]
        compile_ratio = buda["compile_s"] / tvm_plain["compile_s"]
        allowed_mb = buda["base_rss_mb"] + 2 * buda["param_mb"]
        print(f"== {name} (parameters {buda['param_mb']:.1f} MB)")
        print(f"  run:      native {native['run_s'] * 1e3:8.1f} ms   simulated {buda['run_s'] * 1e3:8.1f} ms   "
              f"ratio {run_ratio:5.2f}x   ({_verdict(run_ratio, RUN_TARGETS.get(name, 3.0))})")
        print(f"            plain TVM llvm {tvm_plain['run_s'] * 1e3:8.1f} ms")
        print(f"  compile:  tvm-buda {buda['compile_s']:6.2f} s   plain TVM import+build {tvm_plain['compile_s']:6.2f} s   "
              f"ratio {compile_ratio:5.2f}x   ({_verdict(compile_ratio, 1.5)})")
        print(f"  memory:   peak RSS {buda['peak_rss_mb']:8.1f} MB   model footprint {buda['base_rss_mb']:8.1f} MB + "
              f"2 x params = {allowed_mb:8.1f} MB   ({_verdict(buda['peak_rss_mb'] / allowed_mb, 1.0)})")
        run_peak = buda["peak_rss_run_mb"]
        target = PEAK_RSS_TARGETS_MB.get(name)
        print(f"            peak RSS over compile and runs {run_peak:8.1f} MB"
              + (f"   ({_verdict(run_peak / 1e3, target / 1e3, ' GB')})" if target else ""))
        print(f"  accuracy vs the framework (PyBuda's rule): {buda['accuracy']}")
        print()


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1:] or MODELS)
