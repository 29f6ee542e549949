"""Generation of a Llama on the simulated device (KV cache on the device) beside eager `model.generate` with
its own cache, same torch threads; and the perf model's shapes-only estimate for Llama-3.1-8B.

    python benchmarks/generation.py [--tinyllama] [--tokens 64] [--long 256] [--threads 1] [--no-cache]
    python benchmarks/generation.py --llama8b

Default: a tiny random Llama (2 x 64, vocab 256). --tinyllama: TinyLlama-1.1B's shape (22 x 2048,
32 heads / 4 kv heads, vocab 32000) with random weights (~5-9 GB of RSS; run it rarely). Printed for
both the device path (tvm_buda.generation through pybuda.transformers.run_forward_on_device; compile
excluded) and eager: time to first token (a prefill), decode time per token over --tokens new tokens,
and the decode time per token at 16 and --long new tokens (does it grow with the sequence?). The
device times are the simulator's wall time on this CPU; --no-cache runs the device without a KV
cache (the whole padded sequence per token: the path every LM but GPT-2 took before). --llama8b:
tokens/s and time to first token for Llama-3.1-8B on wh_n150 and wh_n300 at batch 1 and 32, from the
perf model on a meta-device trace (no weights allocated), beside Tenstorrent's published figure.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED_N150_BATCH32 = 21.0   # tokens/s per user, Llama-3.1-8B on n150 at batch 32 (Tenstorrent's current stack)


def _llama_config(tinyllama: bool):
    from transformers import LlamaConfig

    if tinyllama:
        return LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
                           num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048,
                           initializer_range=0.02, pad_token_id=0, bos_token_id=1, eos_token_id=None)
    return LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                       initializer_range=0.2, pad_token_id=0, bos_token_id=1, eos_token_id=None)


def _timed_generate(model, prompt, new_tokens: int) -> tuple[float, object]:
    import torch

    start = time.perf_counter()
    with torch.no_grad():
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens,
                             do_sample=False)
    return time.perf_counter() - start, out


def _profile(model, prompt, tokens: int, long: int) -> dict:
    """Time to first token, decode s/token over `tokens`, and at 16 and `long` new tokens."""
    first, _ = _timed_generate(model, prompt, 1)
    figures = {"ttft": first}
    for n in sorted({tokens, 16, long}):
        total, out = _timed_generate(model, prompt, n)
        figures[n] = ((total - first) / (n - 1), out)
    return figures


def run_device_vs_eager(args) -> None:
    import torch
    from transformers import LlamaForCausalLM

    import pybuda
    from pybuda.transformers.pipeline import run_forward_on_device

    torch.set_num_threads(args.threads)
    pybuda.set_configuration_options(device_config="wh_n150")
    torch.manual_seed(0)
    model = LlamaForCausalLM(_llama_config(args.tinyllama)).eval()
    prompt = torch.randint(3, model.config.vocab_size, (1, 8))
    eager = _profile(model, prompt, args.tokens, args.long)      # before the device forward is installed
    if args.no_cache:
        model.generation_config.use_cache = False
    start = time.perf_counter()
    run_forward_on_device(model)
    for n in sorted({1, args.tokens, 16, args.long}):           # compile every program the timed calls use
        _timed_generate(model, prompt, n)
    compile_seconds = time.perf_counter() - start
    device = _profile(model, prompt, args.tokens, args.long)
    shape = "TinyLlama-1.1B shape" if args.tinyllama else "tiny Llama 2 x 64"
    path = "no KV cache (whole padded sequence per token)" if args.no_cache else "KV cache on the device"
    print(f"{shape}, random weights, prompt 8, {args.threads} torch thread(s); device: {path}; warm-up "
          f"(compiles) {compile_seconds:.1f} s")
    print(f"{'':28}{'device (simulated)':>20}{'eager generate':>18}{'ratio':>8}")
    rows = [("time to first token", device["ttft"], eager["ttft"])]
    rows += [(f"decode per token, {n} new", device[n][0], eager[n][0]) for n in sorted({args.tokens, 16, args.long})]
    for label, d, e in rows:
        print(f"{label:28}{d * 1e3:>17.1f} ms{e * 1e3:>15.2f} ms{d / e:>7.1f}x")
    n = args.tokens
    agree = (device[n][1][0, 8:] == eager[n][1][0, 8:]).float().mean().item()
    print(f"agreement with eager greedy over {n} tokens: {agree:.0%} (default formats)")
    from buda_runtime_sim import bf16_gemm  # (imported where the simulator is)

    print(bf16_gemm.summary())


def llama8b_estimate(boards=("wh_n150", "wh_n300"), batches=(1, 32), prompt_len: int = 128,
                     cache_len: int = 1024) -> list[dict]:
    """Perf-model figures for Llama-3.1-8B decode and prefill steps traced on the meta device."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    sys.path.insert(0, str(ROOT))
    from benchmarks.torch_op_graph import op_graph_from_program
    from buda_runtime_sim.perf import PlacementConfig, estimate
    from tvm_buda.generation import DecoderStep

    config = LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
                         rope_theta=500000.0)
    with torch.device("meta"):
        model = LlamaForCausalLM(config).eval()
    layout = [((1, 8, 0, 128), (1, 8, 0, 128))] * config.num_hidden_layers
    rows = []
    for batch in batches:
        graphs = {}
        for kind, step_len in (("prefill", prompt_len), ("decode", 1)):
            step = DecoderStep(model, batch, step_len, cache_len, layout)
            sample = tuple(t.to("meta") for t in step.sample_inputs())
            program = torch.export.export(step, sample)
            resident = tuple(program.graph_signature.user_inputs[4:])      # the past caches
            graphs[kind] = op_graph_from_program(program, f"llama8b_{kind}_b{batch}", batch, resident=resident)
        for board in boards:
            report = {k: estimate(g, PlacementConfig(device_config=board)) for k, g in graphs.items()}
            decode = report["decode"].device_seconds + report["decode"].transfer_seconds
            prefill = report["prefill"].device_seconds + report["prefill"].transfer_seconds
            rows.append({"board": board, "batch": batch, "tokens_per_s_per_user": 1 / decode,
                         "tokens_per_s": batch / decode, "ttft_s": prefill})
    return rows


def print_llama8b() -> None:
    print("Llama-3.1-8B, perf model (shapes only: Bfp8_b, LoFi; prompt 128, cache 1024 slots)")
    print(f"{'board':10}{'batch':>6}{'tokens/s/user':>15}{'tokens/s':>11}{'time to first token':>22}{'published':>12}")
    for r in llama8b_estimate():
        ref = f"{PUBLISHED_N150_BATCH32:.0f} t/s/u" if (r["board"], r["batch"]) == ("wh_n150", 32) else ""
        print(f"{r['board']:10}{r['batch']:>6}{r['tokens_per_s_per_user']:>15.1f}{r['tokens_per_s']:>11.1f}"
              f"{r['ttft_s'] * 1e3:>19.1f} ms{ref:>12}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tinyllama", action="store_true", help="TinyLlama-1.1B's shape (random weights)")
    parser.add_argument("--tokens", type=int, default=64, help="new tokens for the decode time per token")
    parser.add_argument("--long", type=int, default=256, help="the long run of the 16-vs-long comparison")
    parser.add_argument("--threads", type=int, default=1, help="torch threads, for both (default 1)")
    parser.add_argument("--no-cache", action="store_true", help="the device without a KV cache (the old path)")
    parser.add_argument("--llama8b", action="store_true", help="only the perf-model estimate for Llama-3.1-8B")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.llama8b:
        print_llama8b()
    else:
        run_device_vs_eager(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
