"""Peak memory against the model's own size: tvm-buda beside eager PyTorch, same model, same input.

    python benchmarks/memory_scale.py [--cases llama2 llama4 ...] [--root DIR] [--lock FILE]

Each case runs in two fresh subprocesses: eager PyTorch (build the model, one forward) and tvm-buda
(build, compile_model, a first run, a warm run). Peak RSS is the kernel's high-water mark
(ru_maxrss), read after each stage, so "compile" is the peak through compile and "first" the peak
through the first run. Random weights (nothing is downloaded); float32 framework weights unless
the case says otherwise. `--root` measures another checkout's code (e.g. main before a change).

Cases (issue 30's; all by default):
  llamaN         Llama at TinyLlama-1.1B width (hidden 2048, intermediate 5632, 32 heads, 4 kv heads,
                 vocab 32000), N layers, one forward over 128 tokens (llama4: 0.31B parameters;
                 llama22: TinyLlama-1.1B itself)
  llama3b-bf16   Llama-3.2-3B's shape (28 x 3072, 24 heads, 8 kv heads, vocab 128256, tied embeddings),
                 built in bfloat16 (6.4 GB), one forward over 128 tokens
  bert-large-qa  BertForQuestionAnswering, BERT-large shape (24 x 1024, 16 heads), 384 tokens
  squeezebert    SqueezeBertForSequenceClassification (squeezebert-uncased shape), 128 tokens
Targets (issue 30): float32 models <= 2.0x their weight bytes, the bfloat16 one <= 2.5x; BERT-large QA
<= 3 GB; SqueezeBERT <= 1.5 GB.

A case whose tvm-buda run is expected to need more than the memory available now (MemAvailable,
at ESTIMATE_FACTOR x its weights) is skipped with the reason printed. `--lock FILE` runs each
case holding an flock on FILE (on a shared machine: big runs never overlap another's).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS_GB = {"bert-large-qa": 3.0, "squeezebert": 1.5}
WEIGHT_FACTOR_TARGET = {"float32": 2.0, "bfloat16": 2.5}
CASES = ["llama2", "llama4", "llama8", "llama22", "llama3b-bf16", "bert-large-qa", "squeezebert"]
ESTIMATE_FACTOR = 2.5          # peak RSS / weight bytes expected (tvm-buda: 2.1-2.8x measured), plus 1 GB
WEIGHT_BYTES = {"llama2": 0.88e9, "llama4": 1.23e9, "llama8": 1.92e9, "llama22": 4.40e9, "llama3b-bf16": 6.43e9,
                "bert-large-qa": 1.34e9, "squeezebert": 0.20e9}


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6      # (Linux: KB)


def build(case: str):
    """(model, inputs as a tuple) for a case, with seed 0."""
    import torch

    torch.manual_seed(0)
    if case == "llama3b-bf16":
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(hidden_size=3072, intermediate_size=8192, num_attention_heads=24, num_key_value_heads=8,
                             vocab_size=128256, num_hidden_layers=28, max_position_embeddings=2048,
                             tie_word_embeddings=True, use_cache=False)
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.bfloat16)       # built in bfloat16: never a float32 copy
        try:
            model = LlamaForCausalLM(config).eval()
        finally:
            torch.set_default_dtype(default)
        return model, (torch.randint(0, 128256, (1, 128)),)
    if case.startswith("llama"):
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_attention_heads=32, num_key_value_heads=4,
                             vocab_size=32000, num_hidden_layers=int(case[len("llama"):]), max_position_embeddings=2048,
                             use_cache=False)
        return LlamaForCausalLM(config).eval(), (torch.randint(0, 32000, (1, 128)),)
    if case == "bert-large-qa":
        from transformers import BertConfig, BertForQuestionAnswering

        config = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
        return BertForQuestionAnswering(config).eval(), (torch.randint(0, config.vocab_size, (1, 384)),)
    if case == "squeezebert":
        from transformers import SqueezeBertConfig, SqueezeBertForSequenceClassification

        config = SqueezeBertConfig()
        return SqueezeBertForSequenceClassification(config).eval(), (torch.randint(0, config.vocab_size, (1, 128)),)
    raise SystemExit(f"unknown case {case!r}: llamaN, llama3b-bf16, bert-large-qa or squeezebert")


def _first_output(out):
    import torch

    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (list, tuple)):
        return _first_output(out[0])
    if hasattr(out, "to_tuple"):
        return _first_output(out.to_tuple())
    if hasattr(out, "value"):
        return out.value()
    return torch.as_tensor(out)


def child(case: str, kind: str) -> dict:
    import torch

    torch.set_num_threads(1)
    model, inputs = build(case)
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
    record = {"case": case, "kind": kind, "weight_gb": weights / 1e9, "dtype": dtype, "built_gb": _peak_gb()}
    if kind == "eager":
        start = time.perf_counter()
        with torch.no_grad():
            model(*inputs)
        record.update(run_s=time.perf_counter() - start, peak_gb=_peak_gb())
        return record
    import tvm_buda

    start = time.perf_counter()
    compiled = tvm_buda.compile_model(model, inputs, name=case.replace("-", "_"))
    record.update(compile_s=time.perf_counter() - start, compile_gb=_peak_gb())
    start = time.perf_counter()
    out = compiled.run(*inputs)
    record.update(first_s=time.perf_counter() - start, first_gb=_peak_gb())
    start = time.perf_counter()
    out = compiled.run(*inputs)
    record.update(warm_s=time.perf_counter() - start, peak_gb=_peak_gb())
    with torch.no_grad():
        golden = _first_output(model(*inputs)).float().flatten()
    ours = _first_output(out).float().flatten()
    record["pcc"] = float(torch.corrcoef(torch.stack([golden, ours]))[0, 1])
    return record


def measure(case: str, kind: str, root: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, __file__, "--child", kind, "--cases", case], capture_output=True, text=True,
                         cwd=root, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{case} ({kind}) failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(sim: dict, eager: dict) -> str:
    w = sim["weight_gb"]
    target = TARGETS_GB.get(sim["case"])
    factor = WEIGHT_FACTOR_TARGET[sim.get("dtype", "float32")]
    verdict = (f"target <= {target} GB: {'met' if sim['peak_gb'] <= target else 'missed'}" if target else
               f"target <= {factor}x weights: {'met' if sim['peak_gb'] <= factor * w else 'missed'}")
    return (f"{sim['case']:14} weights {w:5.2f} GB {sim.get('dtype', 'float32')} | eager peak {eager['peak_gb']:5.2f} GB ({eager['peak_gb'] / w:3.1f}x) | "
            f"tvm-buda peak: compile {sim['compile_gb']:5.2f} GB, first run {sim['first_gb']:5.2f} GB, "
            f"warm {sim['peak_gb']:5.2f} GB ({sim['peak_gb'] / w:3.1f}x weights, {sim['peak_gb'] / eager['peak_gb']:3.1f}x "
            f"eager) | compile {sim['compile_s']:.1f} s, first run {sim['first_s']:.1f} s, warm {sim['warm_s']:.1f} s, "
            f"eager {eager['run_s']:.1f} s | PCC {sim['pcc']:.4f} | {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=CASES)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose tvm-buda is measured")
    parser.add_argument("--lock", type=Path, help="hold an flock on this file while each case runs")
    parser.add_argument("--child", choices=["eager", "tvm-buda"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.cases[0], args.child)))
        return
    print(f"peak RSS (ru_maxrss) per stage, one process per case and side; tvm-buda from {args.root}")
    for case in args.cases:
        with _locked(args.lock):            # (memory is judged once the lock is held)
            reason = _cannot_fit(case)
            if reason:
                print(f"{case:14} skipped: {reason}", flush=True)
                continue
            eager = measure(case, "eager", ROOT)
            sim = measure(case, "tvm-buda", args.root)
        print(report(sim, eager), flush=True)


@contextlib.contextmanager
def _locked(path: Path | None):
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _cannot_fit(case: str) -> str | None:
    """Why a case would not fit in the memory available now, or None."""
    weights = WEIGHT_BYTES.get(case)
    if weights is None:
        return None
    needed = ESTIMATE_FACTOR * weights + 1e9
    available = _available_bytes()
    if available is not None and needed > available:
        return f"needs about {needed / 1e9:.1f} GB ({ESTIMATE_FACTOR}x its weights + 1 GB), {available / 1e9:.1f} GB available"
    return None


def _available_bytes() -> float | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


if __name__ == "__main__":
    main()
