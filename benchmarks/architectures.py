"""Every transformers model class built offline from a tiny random config, run through plain TVM and
tvm-buda and compared with eager PyTorch under PyBuda's rule (PCC >= 0.99 or allclose with atol
0.1 * max|golden|).

    python benchmarks/architectures.py                      # base models of every architecture
    python benchmarks/architectures.py --heads              # and every task-head class
    python benchmarks/architectures.py --only OPTModel FalconModel --out /tmp/arch.jsonl
    python benchmarks/architectures.py --summary arch.jsonl # the counts and the failures by cause

Classes run in child processes, one at a time, 20 to a child (one torch/TVM thread, a time limit
per class and an RSS limit), so a crash or a hang costs one row and the next child goes on; rows
are appended to a JSON-lines file and a rerun skips the classes already in it. Both sides trace
with tvm-buda's import settings (no key/value cache, which torch.export cannot return; experts as
batched GEMMs: tvm_buda.frontends.pytorch.exportable_configs). "Tried" counts the classes that built
from a tiny config and ran in eager PyTorch with tensor inputs (tiny_transformers.py says how both are made).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RSS_LIMIT_MB = 4000


def model_classes(heads: bool) -> list[str]:
    """Class names from transformers' auto mappings: base models, and with `heads` every head class."""
    from transformers.models.auto import modeling_auto

    tables = [modeling_auto.MODEL_MAPPING_NAMES]
    if heads:
        tables += [v for k, v in vars(modeling_auto).items() if k.endswith("_MAPPING_NAMES") and isinstance(v, dict)
                   and k != "MODEL_MAPPING_NAMES"]
    names = []
    for table in tables:
        for value in table.values():
            names += list(value) if isinstance(value, (list, tuple)) else [value]
    return list(dict.fromkeys(names))


# ---- one class, in a child process ----------------------------------------------------------------
def _flat(values) -> list:
    """Framework or compiled outputs as a flat list of arrays (verification.flat_outputs: caches left
    out); None, an output a model did not make, is no array."""
    from buda_runtime_sim.runtime.verification import flat_outputs

    return [] if values is None else flat_outputs(values)


def _compare(outputs, golden) -> dict:
    from buda_runtime_sim.verify import compare

    outs, golds = _flat(outputs), _flat(golden)
    if len(outs) != len(golds):
        return {"passed": False, "cause": f"{len(outs)} outputs, eager PyTorch {len(golds)}"}
    results = [compare(o, g) for o, g in zip(outs, golds)]
    worst = min(results, key=lambda r: (r.passed, r.pcc if r.pcc == r.pcc else -2))
    row = {"passed": all(r.passed for r in results), "pcc": worst.pcc, "max_abs_error": worst.max_abs_error}
    if not row["passed"]:
        row["cause"] = f"output differs (pcc {worst.pcc:.3f}, max error {worst.max_abs_error:.3g})"
    return row


def _error(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    text = next((line for line in reversed(lines) if "Error" in line), lines[-1] if lines else "")
    return f"{type(exc).__name__}: {text[:300]}"


def _plain_tvm(model, feed) -> object:
    import torch
    import tvm
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    from tvm_buda.frontends.pytorch import exportable_configs

    with torch.no_grad(), exportable_configs(model, feed):     # both sides trace the same (no kv cache, ...)
        exported = torch.export.export(model, (), feed)
    mod = from_exported_program(exported, keep_params_as_input=True, unwrap_unit_return_tuple=True)
    mod, params = relax.frontend.detach_params(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    order = [n for n in exported.graph_signature.user_inputs]
    inputs = [tvm.runtime.tensor(feed[name].numpy()) for name in order]
    return _tvm_values(vm["main"](*inputs, *params.get("main", [])))


def _tvm_values(value):
    import numpy as np

    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return tuple(_tvm_values(v) for v in value)


_current = {"class": None, "ran": 0}   # the class a child is running (for the RSS watchdog's row)


def _watch_rss(limit_mb: float) -> None:
    """Ends this child with a row for its current class when it grows past the RSS limit."""
    def watch():
        while True:
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
            if rss > limit_mb:
                print(json.dumps({"class": _current["class"], "status": "tried", "rss_limit": True,
                                  "buda": {"passed": False, "cause": f"RSS over {limit_mb:.0f} MB (its child had run "
                                                                     f"{_current['ran']} classes before)"}}), flush=True)
                os._exit(3)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def child(name: str, out_dir: str) -> dict:
    import torch
    import transformers

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import tiny_transformers as tiny

    torch.set_num_threads(1)
    _current["class"] = name
    _current["ran"] += 1
    row = {"class": name}
    model_class = getattr(transformers, name, None)
    if model_class is None:
        return {**row, "status": "not_importable"}
    try:
        config = tiny.tiny_config(model_class.config_class)
        row["model_type"] = config.model_type
        params = tiny.parameter_count(model_class, config)
    except Exception as exc:  # noqa: BLE001 - a config the generic shrink cannot make
        return {**row, "status": "no_tiny_config", "cause": _error(exc)}
    row["params"] = params
    if params > tiny.MAX_PARAMS:
        return {**row, "status": "too_large"}
    try:
        model = tiny.build(model_class, config)
    except Exception as exc:  # noqa: BLE001
        return {**row, "status": "no_tiny_config", "cause": _error(exc)}
    golden, feed, cause = None, None, "no tensor input it takes"
    for candidate in tiny.candidate_inputs(model, config):
        try:
            with torch.no_grad():
                golden = model(**candidate)
            feed = candidate
            break
        except Exception as exc:  # noqa: BLE001 - try the next set of inputs
            cause = _error(exc)
    if feed is None:
        return {**row, "status": "eager_failed", "cause": cause}
    row.update(status="tried", inputs=sorted(feed))
    try:
        row["plain_tvm"] = _compare(_plain_tvm(model, feed), golden)
    except Exception as exc:  # noqa: BLE001
        row["plain_tvm"] = {"passed": False, "cause": _error(exc)}
    import tvm_buda

    os.chdir(out_dir)
    try:
        compiled = tvm_buda.compile_model(model, (feed,), name=name.lower())
        row["buda"] = _compare(compiled.run(feed), golden)
        row["buda"]["device_share"] = compiled.partition_summary().device_fraction
    except Exception as exc:  # noqa: BLE001
        row["buda"] = {"passed": False, "cause": _error(exc)}
    return row


# ---- the sweep and its summary ------------------------------------------------------------------
BATCH = 20    # classes per child process: one start-up (torch, transformers, TVM) serves them all


def run_all(names: list[str], out: Path, timeout: float) -> None:
    done = {json.loads(line)["class"] for line in out.read_text().splitlines() if line.strip()} if out.exists() else set()
    todo = [n for n in names if n not in done]
    print(f"{len(names)} classes, {len(done)} already in {out}, {len(todo)} to run", flush=True)
    count = 0
    while todo:
        batch, todo = todo[:BATCH], todo[BATCH:]
        for row in _run_batch(batch, timeout):
            count += 1
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            verdict = row["status"] if row["status"] != "tried" else (
                f"tvm {'ok' if row.get('plain_tvm', {}).get('passed') else 'FAIL'}, "
                f"buda {'ok' if row.get('buda', {}).get('passed') else 'FAIL'}")
            print(f"[{count}/{count + len(todo) + len(batch)}] {row['class']}: {verdict} ({row['seconds']} s)",
                  flush=True)
            batch = batch[1:]
        todo = batch + todo          # a child that died left these: the next child takes them


def _run_batch(names: list[str], timeout: float):
    """Rows of one child running `names` in order; stops at the first class that crashes its child or
    overruns `timeout` (that class gets a row saying so)."""
    import queue
    import tempfile

    env = {**os.environ, "OMP_NUM_THREADS": "1", "TVM_NUM_THREADS": "1", "PYTHONPATH": str(ROOT),
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen([sys.executable, __file__, "--child", *names], stdout=subprocess.PIPE,
                                stderr=errors, stdin=subprocess.DEVNULL, text=True, env=env, cwd=ROOT)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: ([lines.put(line) for line in proc.stdout], lines.put(None)),
                         daemon=True).start()
        try:
            for name in names:
                start = time.perf_counter()
                row = None
                while row is None:
                    try:
                        line = lines.get(timeout=max(1.0, timeout - (time.perf_counter() - start)))
                    except queue.Empty:
                        proc.kill()
                        yield {"class": name, "status": "tried", "timeout": True, "seconds": round(timeout, 1),
                               "buda": {"passed": False, "cause": f"over {timeout:.0f} s"}}
                        return
                    if line is None:
                        proc.wait()
                        errors.seek(0)
                        tail = (errors.read().strip().splitlines() or ["no output"])[-1][:300]
                        yield {"class": name, "status": "crashed", "cause": f"exit {proc.returncode}: {tail}",
                               "seconds": round(time.perf_counter() - start, 1)}
                        return
                    if line.startswith("{"):
                        row = json.loads(line)
                row.update({"class": name, "seconds": round(time.perf_counter() - start, 1)})
                yield row
                if row.get("rss_limit"):
                    return
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def summary(out: Path) -> str:
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    tried = [r for r in rows if r["status"] == "tried"]
    plain = sum(bool(r.get("plain_tvm", {}).get("passed")) for r in tried)
    buda = sum(bool(r.get("buda", {}).get("passed")) for r in tried)
    lines = [f"{len(rows)} classes: {len(tried)} tried (built from a tiny config and ran in eager PyTorch); "
             f"plain TVM passes {plain}, tvm-buda passes {buda}",
             "not tried: " + ", ".join(f"{k} {v}" for k, v in Counter(r["status"] for r in rows
                                                                         if r["status"] != "tried").items())]
    for side in ("buda", "plain_tvm"):
        failing = [r for r in tried if not r.get(side, {}).get("passed")]
        lines.append(f"\n{side} failures ({len(failing)}):")
        for r in sorted(failing, key=lambda r: r[side].get("cause", "") if side in r else ""):
            lines.append(f"  {r['class']:<48} {r.get(side, {}).get('cause', 'not run')}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heads", action="store_true", help="every task-head class too, not only base models")
    parser.add_argument("--only", nargs="+", help="these class names only")
    parser.add_argument("--out", default="architectures.jsonl", type=Path)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per class")
    parser.add_argument("--summary", type=Path, help="print the summary of a results file and stop")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        import tempfile
        import warnings

        warnings.filterwarnings("ignore")
        _watch_rss(RSS_LIMIT_MB)
        for name in args.child:
            with tempfile.TemporaryDirectory(prefix="tvm_buda_arch_") as scratch:
                try:
                    row = child(name, scratch)
                finally:
                    os.chdir(ROOT)
            print(json.dumps(row, default=float), flush=True)
            gc.collect()
        return 0
    if args.summary:
        print(summary(args.summary))
        return 0
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})   # one core, children included
    run_all(args.only or model_classes(args.heads), args.out, args.timeout)
    print(summary(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
