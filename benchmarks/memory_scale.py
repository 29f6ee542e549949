"""Peak memory against the model's own size: tvm-buda beside eager PyTorch, same model, same input.

    python benchmarks/memory_scale.py [--cases llama4 bert-large-qa squeezebert] [--root DIR]

Each case runs in two fresh subprocesses: eager PyTorch (build the model, one forward) and tvm-buda
(build, compile_model, a first run, a warm run). Peak RSS is the kernel's high-water mark
(ru_maxrss), read after each stage, so "compile" is the peak through compile and "first" the peak
through the first run. Random weights (nothing is downloaded); float32 framework weights unless
the case says otherwise. `--root` measures another checkout's code (e.g. main before a change).

Cases (issue 30's):
  llamaN         Llama at TinyLlama-1.1B width (hidden 2048, intermediate 5632, 32 heads, 4 kv heads,
                 vocab 32000), N layers, one forward over 128 tokens (llama4: 0.31B parameters)
  bert-large-qa  BertForQuestionAnswering, BERT-large shape (24 x 1024, 16 heads), 384 tokens
  squeezebert    SqueezeBertForSequenceClassification (squeezebert-uncased shape), 128 tokens
Targets (issue 30): float32 models <= 2.0x their weight bytes; BERT-large QA <= 3 GB; SqueezeBERT <= 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS_GB = {"bert-large-qa": 3.0, "squeezebert": 1.5}
WEIGHT_FACTOR_TARGET = 2.0


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6      # (Linux: KB)


def build(case: str):
    """(model, inputs as a tuple) for a case, with seed 0."""
    import torch

    torch.manual_seed(0)
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
    raise SystemExit(f"unknown case {case!r}: llamaN, bert-large-qa or squeezebert")


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
    record = {"case": case, "kind": kind, "weight_gb": weights / 1e9, "built_gb": _peak_gb()}
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
    verdict = (f"target <= {target} GB: {'met' if sim['peak_gb'] <= target else 'missed'}" if target else
               f"target <= {WEIGHT_FACTOR_TARGET}x weights: {'met' if sim['peak_gb'] <= WEIGHT_FACTOR_TARGET * w else 'missed'}")
    return (f"{sim['case']:14} weights {w:5.2f} GB | eager peak {eager['peak_gb']:5.2f} GB ({eager['peak_gb'] / w:3.1f}x) | "
            f"tvm-buda peak: compile {sim['compile_gb']:5.2f} GB, first run {sim['first_gb']:5.2f} GB, "
            f"warm {sim['peak_gb']:5.2f} GB ({sim['peak_gb'] / w:3.1f}x weights, {sim['peak_gb'] / eager['peak_gb']:3.1f}x "
            f"eager) | compile {sim['compile_s']:.1f} s, first run {sim['first_s']:.1f} s, warm {sim['warm_s']:.1f} s, "
            f"eager {eager['run_s']:.1f} s | PCC {sim['pcc']:.4f} | {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["llama4", "bert-large-qa", "squeezebert"])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose tvm-buda is measured")
    parser.add_argument("--child", choices=["eager", "tvm-buda"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.cases[0], args.child)))
        return
    print(f"peak RSS (ru_maxrss) per stage, one process per case and side; tvm-buda from {args.root}")
    for case in args.cases:
        eager = measure(case, "eager", ROOT)
        sim = measure(case, "tvm-buda", args.root)
        print(report(sim, eager), flush=True)


if __name__ == "__main__":
    main()
