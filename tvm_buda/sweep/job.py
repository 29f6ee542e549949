"""One sweep job, run inside a job process: build the model, compile it at the spec's format and
fidelity, run it on the simulator, compare with the framework (PyBuda's rule) and estimate its
throughput on the spec's board. Returns a small JSON-able dict; an exception becomes an ERROR row
with the stage it happened in and its first line."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .spec import JobSpec

STATUSES = ("PASS", "FAIL", "ERROR", "CRASH", "TIMEOUT")


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _arrays(outputs) -> list[np.ndarray]:
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    elif not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    out = []
    for value in outputs:
        if hasattr(value, "detach"):
            value = value.detach().cpu().float().numpy()
        elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):
            value = value.numpy()
        out.append(np.asarray(value))
    return out


def _config(spec: JobSpec):
    from buda_runtime_sim.config import CompilerConfig
    from buda_runtime_sim.dataformat import DataFormat, MathFidelity

    config = CompilerConfig()
    config.default_df_override = DataFormat.parse(spec.data_format)
    config.default_math_fidelity = MathFidelity.parse(spec.fidelity)
    return config


def run(spec: JobSpec, workdir: Path) -> dict:
    """The job's measurements; never raises for a model's own failure (that is an ERROR row)."""
    from buda_runtime_sim.verify import compare

    from ..model_compiler import compile_model
    from .models import load

    result: dict = {"stage": "build"}
    try:
        loaded = load(spec.model, workdir)
        result["framework"] = loaded.framework
        result["stage"] = "compile"
        start = time.perf_counter()
        compiled = compile_model(loaded.model, loaded.inputs, config=_config(spec), name="sweep")
        result["compile_s"] = round(time.perf_counter() - start, 3)
        summary = compiled.partition_summary()
        result.update(device_share=round(summary.device_fraction, 4), graph_breaks=summary.graph_breaks,
                      device_ops=len(compiled.device_ops()), cpu_ops=len(compiled.cpu_ops()))
        result["stage"] = "run"
        start = time.perf_counter()
        outputs = _arrays(compiled.run(*loaded.inputs))
        result["run_s"] = round(time.perf_counter() - start, 3)
        result["stage"] = "compare"
        golden = _arrays(loaded.golden())
        if len(outputs) != len(golden):
            raise ValueError(f"the device gave {len(outputs)} outputs, the framework {len(golden)}")
        comparisons = [compare(o, g) for o, g in zip(outputs, golden)]
        worst = min(comparisons, key=lambda c: (c.passed, c.pcc))
        result.update(pcc=round(worst.pcc, 6), max_abs_error=float(f"{max(c.max_abs_error for c in comparisons):.6g}"),
                      atol=float(f"{worst.atol:.6g}"), status="PASS" if all(c.passed for c in comparisons) else "FAIL")
        result["stage"] = "perf"
        report = compiled.perf_report(spec.device_config)
        result["samples_per_second"] = float(f"{report.samples_per_second:.6g}")
        result["stage"] = "done"
    except Exception as exc:  # noqa: BLE001 - any failure of the model is a row, not a lost sweep
        import traceback

        traceback.print_exc()   # into the job's log.txt
        result.update(status="ERROR", error=first_line(exc))
    return result
