"""Greedy GPT-2 decoding: the perf model's time per token on a board vs PyTorch eager per token.

    python benchmarks/generation.py [--layers L] [--embd E] [--heads H] [--vocab V] [--prompt P]
                                    [--cache C] [--tokens N] [--rounds R] [--board wh_n150] [--gpt2-small]
                                    [--init 0.2] [--fp32]

Random weights from a GPT2Config (--gpt2-small: GPT-2 small's shape, 12 x 768, vocab 50257). The
device side is tvm_buda.generation.GPT2Generator (prefill + decode compiled once each, KV cache
held by the TTDevice); PyTorch runs `model.generate(do_sample=False)` with its own KV cache.
Rounds alternate between the two so machine load hits both alike; medians are reported. Printed:
the perf model's predicted time per token (what the board would take), PyTorch eager's measured
time per token on this CPU, the simulator's own wall time per token (how long simulating takes),
token agreement with PyTorch and the share of ops on the device. --gpt2-small compiles in ~25 s
and peaks near 4 GB of RSS (weights held by torch, both compiled programs and the simulator).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--embd", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--prompt", type=int, default=16, help="compiled prompt length (the prompt used is 3/4 of it)")
    parser.add_argument("--cache", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--board", default="wh_n150")
    parser.add_argument("--gpt2-small", action="store_true", help="12 layers, n_embd 768, 12 heads, vocab 50257")
    parser.add_argument("--init", type=float, default=0.2, help="initializer_range of the random weights (0.2: a "
                        "varied greedy sequence; GPT-2's own 0.02 repeats one token)")
    parser.add_argument("--fp32", action="store_true", help="Float32 formats and accumulation, HiFi4 (a Wormhole board)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: a loaded machine's thread "
                        "pool stalls)")
    args = parser.parse_args(argv)
    if args.gpt2_small:
        args.layers, args.embd, args.heads, args.vocab = 12, 768, 12, 50257
    sys.path.insert(0, str(ROOT))
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import pybuda
    from tvm_buda.generation import GPT2Generator

    torch.set_num_threads(args.threads)
    pybuda.set_configuration_options(device_config=args.board)
    if args.fp32:
        pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                         accumulate_df=pybuda.DataFormat.Float32, math_fidelity=pybuda.MathFidelity.HiFi4)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=args.vocab, n_positions=max(args.cache, 64), n_embd=args.embd, n_layer=args.layers,
                        n_head=args.heads, initializer_range=args.init, bos_token_id=0, eos_token_id=None, pad_token_id=0)
    model = GPT2LMHeadModel(config).eval()
    prompt = torch.randint(1, args.vocab, (1, max(1, 3 * args.prompt // 4)))
    tokens = min(args.tokens, args.cache - prompt.shape[1] + 1)

    start = time.perf_counter()
    generator = GPT2Generator(model, prompt_len=args.prompt, cache_len=args.cache)
    compile_seconds = time.perf_counter() - start

    def eager():
        with torch.no_grad():
            return model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=tokens,
                                  do_sample=False)

    eager_times, sim_times = [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        golden = eager()
        eager_times.append((time.perf_counter() - start) / tokens)
        start = time.perf_counter()
        out = generator.generate(prompt, tokens)
        sim_times.append((time.perf_counter() - start) / tokens)
    n = prompt.shape[1]
    agreement = (out[0, n:] == golden[0, n:]).float().mean().item()
    perf = generator.perf(args.board)
    shares = [c.partition_summary() for c in generator.compiled]
    print(f"GPT-2 {args.layers} x {args.embd}, vocab {args.vocab}, prompt {n} (padded to {args.prompt}), cache "
          f"{args.cache}, {tokens} new tokens; compile (prefill + decode) {compile_seconds:.1f} s")
    print(f"device share: prefill {shares[0].device_fraction:.0%}, decode {shares[1].device_fraction:.0%} of ops "
          f"(host: {', '.join(sorted(set(generator.compiled[1].cpu_ops())))})")
    print(f"perf model   {perf}")
    predicted = perf.seconds_per_token
    eager_token, sim_token = statistics.median(eager_times), statistics.median(sim_times)
    print(f"per token    {args.board} (perf model) {predicted * 1e3:.3f} ms | PyTorch eager (this CPU, "
          f"{args.threads} thread) {eager_token * 1e3:.3f} ms | ratio eager/board {eager_token / predicted:.1f}x")
    print(f"simulating   {sim_token * 1e3:.1f} ms wall per token ({sim_token / eager_token:.1f}x PyTorch eager)")
    formats = "Float32/HiFi4" if args.fp32 else "default formats"
    print(f"agreement    {agreement:.0%} of {tokens} tokens as transformers ({formats})")
    from buda_runtime_sim import bf16_gemm  # (imported where the simulator is)
    print(bf16_gemm.summary())
    pybuda.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
