"""How much the simulator's numerics cost relative to plain float32 numpy.

Targets (issue 3): a simulated 1024^3 matmul at any fidelity <= 2.5x a float32 np.matmul of the
same shapes, and Bfp8_b quantisation of a 4096x4096 tensor <= 4x one float32 elementwise multiply
over it. The Float16_b rows (weight slices cached, as for a model's weights) take the
bfloat16 route where the CPU has bfloat16 instructions (TVM_BUDA_BF16_GEMM). Each candidate is timed interleaved with its baseline and the best runs are compared, so
other load on the machine hits both alike.

    python benchmarks/numerics_speed.py [--repeats N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from buda_runtime_sim import bf16_gemm
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.fidelity import fidelity_matmul
from buda_runtime_sim.formats import quantize

MATMUL_TARGET = 2.5
QUANTIZE_TARGET = 4.0


def _best_ratio(candidate, baseline, repeats: int) -> tuple[float, float, float]:
    """(ratio of best times, best candidate seconds, best baseline seconds), timed alternately."""
    candidate(), baseline()                                     # warm up caches and allocators
    cand, base = [], []
    for _ in range(repeats):
        for fn, times in ((baseline, base), (candidate, cand)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return min(cand) / min(base), min(cand), min(base)


def _report(name: str, ratio: float, cand: float, base: float, target: float) -> bool:
    met = ratio <= target
    print(f"{name:<38} {cand * 1e3:8.1f} ms vs {base * 1e3:7.1f} ms  ratio {ratio:5.2f} "
          f"(target <= {target}) {'MET' if met else 'NOT MET'}")
    return met


def bench_matmul(repeats: int) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    worst = 0.0
    for fidelity in (MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi3, MathFidelity.HiFi4):
        for acc in (DataFormat.Float32, DataFormat.Float16_b):
            ratio, cand, base = _best_ratio(lambda: fidelity_matmul(a, b, fidelity, acc),
                                            lambda: np.matmul(a, b), repeats)
            _report(f"matmul 1024^3 {fidelity.name} acc={acc.name}", ratio, cand, base, MATMUL_TARGET)
            worst = max(worst, ratio)
    # The default formats: Float16_b operands and accumulation (the bfloat16 route where the CPU has it).
    qa, qb = quantize(a, DataFormat.Float16_b), quantize(b, DataFormat.Float16_b)
    cache = {}
    for fidelity in (MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi3, MathFidelity.HiFi4):
        ratio, cand, base = _best_ratio(
            lambda: fidelity_matmul(qa, qb, fidelity, DataFormat.Float16_b, a_format=DataFormat.Float16_b,
                                    b_format=DataFormat.Float16_b, b_cache=cache),
            lambda: np.matmul(a, b), repeats)
        _report(f"matmul 1024^3 {fidelity.name} Float16_b operands", ratio, cand, base, MATMUL_TARGET)
        worst = max(worst, ratio)
    return worst


def bench_quantize(repeats: int) -> float:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4096, 4096), dtype=np.float32)
    y = rng.standard_normal((4096, 4096), dtype=np.float32)
    ratio, cand, base = _best_ratio(lambda: quantize(x, DataFormat.Bfp8_b), lambda: np.multiply(x, y), repeats)
    _report("quantize 4096x4096 Bfp8_b vs multiply", ratio, cand, base, QUANTIZE_TARGET)
    return ratio


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    matmul = bench_matmul(args.repeats)
    quant = bench_quantize(args.repeats)
    print(f"\nworst matmul ratio {matmul:.2f} (target <= {MATMUL_TARGET}): {'MET' if matmul <= MATMUL_TARGET else 'NOT MET'}")
    print(f"Bfp8_b quantize ratio {quant:.2f} (target <= {QUANTIZE_TARGET}): {'MET' if quant <= QUANTIZE_TARGET else 'NOT MET'}")
    print(bf16_gemm.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
