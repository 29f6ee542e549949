"""Time to first output: from a TT device image vs from a cold compile (BERT-base encoders).

    python benchmarks/image_speed.py [--models 12x128 2x32] [--repeat 3] [--threads N]

Each model is LAYERSxSEQ (a BERT-base encoder of that many layers at that sequence length).
Each path runs in a fresh process, as a deployment would, `--repeat` times, the two paths
interleaved; medians are reported (other jobs on the machine make single times noisy). "First
output" counts everything after the imports: compile (or load_from_disk + TTDevice.load_image)
and the first run_inference; "ready" leaves out the first run. "warm run" is a second
run_inference of the compiled model: the floor of any first output (it bounds the ratio at
(compile + run) / run). Target: the image is >= 10x faster to first output.

Wall time on a shared machine mostly measures the other jobs (torch's threads spin-wait for a
busy core), so each time is also given as the process's CPU time (all its threads), and
`--threads N` runs the children with OMP_NUM_THREADS=N (torch's pool): with one thread nothing
spins and the CPU-time ratio is what an idle machine would show on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COLD = """
import json, sys, time, torch, pybuda, tvm_buda
from tvm_buda.demo_models import bert_encoder_hidden
model, x = bert_encoder_hidden(layers={layers}), torch.randn(1, {seq}, 768, generator=torch.Generator().manual_seed(0))
start, cpu = time.perf_counter(), time.process_time()
tt0 = pybuda.TTDevice("tt0", arch=pybuda.BackendDevice.Wormhole_B0, module=pybuda.PyTorchModule("bert", model))
out = pybuda.run_inference(inputs=[(x,)]).get()[0].value()             # cold compile, first output
first, first_cpu = time.perf_counter() - start, time.process_time() - cpu
again, cpu = time.perf_counter(), time.process_time()
out = pybuda.run_inference(inputs=[(x,)]).get()[0].value()             # the same run, compiled
run, run_cpu = time.perf_counter() - again, time.process_time() - cpu
again = time.perf_counter()
tt0.compile_to_image(img_path=sys.argv[1], sample_inputs=(x,))        # reuses the compiled model
print(json.dumps({{"first_output_s": first, "ready_s": first - run, "run_s": run, "save_s": time.perf_counter() - again,
                  "first_output_cpu_s": first_cpu, "run_cpu_s": run_cpu}}))
"""

IMAGE = """
import json, sys, time, torch, pybuda, tvm_buda
x = torch.randn(1, int(sys.argv[2]), 768, generator=torch.Generator().manual_seed(0))
start, cpu = time.perf_counter(), time.process_time()
img = pybuda.TTDeviceImage.load_from_disk(sys.argv[1])
device = pybuda.TTDevice.load_image(img=img)
loaded = time.perf_counter() - start
out = pybuda.run_inference(inputs=[(x,)]).get()[0].value()
print(json.dumps({"first_output_s": time.perf_counter() - start, "ready_s": loaded,
                  "first_output_cpu_s": time.process_time() - cpu}))
"""


def _child(code: str, image: Path, seq: int, cwd: str, threads: int | None) -> dict:
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYBUDA_ENABLE_TVM_CACHE": "0"}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    result = subprocess.run([sys.executable, "-c", code, str(image), str(seq)], cwd=cwd, capture_output=True, text=True,
                            timeout=3600, env=env)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    return {**json.loads(result.stdout.strip().splitlines()[-1]), "process_s": time.perf_counter() - start}


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def measure(layers: int, seq: int, repeat: int, threads: int | None = None) -> dict:
    """Medians of `repeat` interleaved cold and image processes for one model."""
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as cwd:
        image = Path(cwd) / "bert.tti"
        for _ in range(repeat):
            cold.append(_child(COLD.format(layers=layers, seq=seq), image, seq, cwd, threads))
            warm.append(_child(IMAGE, image, seq, cwd, threads))
        size = image.stat().st_size / 1e6
    out = {"model": f"BERT-base encoder, {layers} layers, seq {seq}", "image_mb": size, "repeat": repeat}
    for key in ("first_output_s", "ready_s", "run_s", "save_s", "first_output_cpu_s", "run_cpu_s"):
        out[f"cold_{key}"] = _median(cold, key)
    for key in ("first_output_s", "ready_s", "first_output_cpu_s"):
        out[f"image_{key}"] = _median(warm, key)
    out["first_output_ratio"] = out["cold_first_output_s"] / out["image_first_output_s"]
    out["ready_ratio"] = out["cold_ready_s"] / out["image_ready_s"]
    out["bound"] = out["cold_first_output_s"] / out["cold_run_s"]
    out["cpu_ratio"] = out["cold_first_output_cpu_s"] / out["image_first_output_cpu_s"]
    out["cpu_bound"] = out["cold_first_output_cpu_s"] / out["cold_run_cpu_s"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["12x128", "2x32"], help="LAYERSxSEQ per model")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="OMP_NUM_THREADS for the children (default: torch's)")
    args = parser.parse_args()
    from buda_runtime_sim import bf16_gemm

    print(f"GEMM route (the children's): {bf16_gemm.route()}")
    for spec in args.models:
        layers, seq = (int(v) for v in spec.lower().split("x"))
        r = measure(layers, seq, args.repeat, args.threads)
        verdict = "met" if r["first_output_ratio"] >= 10 else f"MISSED: {10 / r['first_output_ratio']:.2f}x short"
        threads = f"; OMP_NUM_THREADS={args.threads}" if args.threads else ""
        print(f"{r['model']} (image {r['image_mb']:.0f} MB; medians of {r['repeat']}{threads})")
        print(f"  cold compile: ready after {r['cold_ready_s']:.2f} s, first output after {r['cold_first_output_s']:.2f} s, "
              f"warm run {r['cold_run_s']:.2f} s (saving the image then took {r['cold_save_s']:.2f} s)")
        print(f"  from image:   ready after {r['image_ready_s']:.2f} s, first output after {r['image_first_output_s']:.2f} s")
        print(f"  time to first output: image {r['first_output_ratio']:.1f}x faster (target >= 10x: {verdict}); "
              f"time to ready: {r['ready_ratio']:.1f}x; a first output cannot beat one warm run: bound "
              f"{r['bound']:.1f}x")
        print(f"  CPU time (all threads): cold first output {r['cold_first_output_cpu_s']:.2f} s (warm run "
              f"{r['cold_run_cpu_s']:.2f} s), image first output {r['image_first_output_cpu_s']:.2f} s: "
              f"{r['cpu_ratio']:.1f}x (bound {r['cpu_bound']:.1f}x)")


if __name__ == "__main__":
    main()
