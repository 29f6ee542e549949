"""Generation of a Llama on the simulated device (KV cache on the device) beside eager `model.generate` with
its own cache, same torch threads; and the perf model's shapes-only estimate for Llama-3.1-8B.

    python benchmarks/generation.py [--tinyllama] [--tokens 64] [--long 256] [--threads 1] [--rounds 3] [--no-cache]
    python benchmarks/generation.py --llama8b

Default: a tiny random Llama (2 x 64, vocab 256). --tinyllama: TinyLlama-1.1B's shape (22 x 2048, 32
heads / 4 kv heads, vocab 32000) with random weights (run it rarely: with --tokens 64 it reached 22 GB
of RSS and was killed for memory on a 24 GB machine). Printed for both the device path
(tvm_buda.generation through pybuda.transformers.run_forward_on_device; compile excluded) and eager:
time to first token (a prefill), decode time per token over --tokens new tokens, and the decode time per
token at 16 and --long new tokens (does it grow with the sequence?), as wall time and as this process's
CPU time (steadier on a shared machine), the least of --rounds rounds. The device times are the
simulator's time on this CPU. Then the greedy tokens' agreement with eager at the default formats and at
Float32/HiFi4 (tiny model only), with the first departing token, eager's top-2 logit margin and the
device's logit difference there (a near-tie when the margin is the smaller). --no-cache runs the device
without a KV cache (the whole padded sequence per token: the path every LM but GPT-2 took before).
--llama8b: tokens/s and time to first token for Llama-3.1-8B on wh_n150 and wh_n300 at batch 1 and 32,
from the perf model on a meta-device trace (no weights allocated), beside Tenstorrent's published
figure.
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


def _timed_generate(model, prompt, new_tokens: int) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) of a greedy generate: on a shared machine the CPU time
    is the steadier figure (one torch thread: equal to the wall time on an idle machine)."""
    import torch

    wall, cpu = time.perf_counter(), time.process_time()
    with torch.no_grad():
        model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens, do_sample=False)
    return time.perf_counter() - wall, time.process_time() - cpu


def _lengths(args) -> list[int]:
    return sorted({args.tokens, 16, args.long})


def _profile(model, prompt, lengths: list[int], label: str, rounds: int) -> dict:
    """Time to first token (a one-token generate: the prefill), and the decode s/token at each length,
    each as (wall, CPU): the least of `rounds` rounds (the machine may be shared)."""
    best: dict = {}
    for _ in range(rounds):
        first = _timed_generate(model, prompt, 1)
        figures = {"ttft": first}
        for n in lengths:
            total = _timed_generate(model, prompt, n)
            figures[n] = tuple((t - f) / (n - 1) for t, f in zip(total, first))
        best = {k: tuple(min(pair) for pair in zip(v, best.get(k, v))) for k, v in figures.items()}
        print(f"  {label}: time to first token {first[0] * 1e3:.1f} ms (CPU {first[1] * 1e3:.1f}); decode per "
              "token " + ", ".join(f"{figures[n][0] * 1e3:.2f} ms (CPU {figures[n][1] * 1e3:.2f}) over {n}"
                                   for n in lengths), flush=True)
    return best


def _compile_programs(model, prompt_len: int, lengths: list[int]) -> None:
    """Compile the prefill and decode programs the timed calls use, without generating."""
    from tvm_buda.generation.step_inputs import cache_length, step_length

    programs = model.forward.decoder.programs
    for n in sorted({1, *lengths}):
        cache_len = cache_length(prompt_len + n)
        programs.get(1, step_length(prompt_len, 0, cache_len), cache_len)
        programs.get(1, 1, cache_len)


def _scored_generate(model, prompt, new_tokens: int):
    import torch

    with torch.no_grad():
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens,
                             do_sample=False, output_scores=True, return_dict_in_generate=True)
    return out.sequences[0, prompt.shape[1]:], torch.stack([s[0] for s in out.scores])


def agreement(device_run, eager_run) -> dict:
    """Tokens equal to eager's greedy ones, and at the first step where they differ (both saw the same
    prefix there): eager's top-2 logit margin and the device's largest logit difference from eager. A
    margin below that difference is a near-tie the device's numerics may flip; a margin above it is a bug."""
    (tokens, logits), (golden, golden_logits) = device_run, eager_run
    equal = tokens == golden
    found = {"agree": int(equal.sum()), "of": len(golden), "first": None,
             "max_error_before": float((logits - golden_logits).abs().max())}
    if not bool(equal.all()):
        first = int((~equal).nonzero()[0])
        top2 = golden_logits[first].topk(2).values
        found.update(first=first, margin=float(top2[0] - top2[1]),
                     error=float((logits[first] - golden_logits[first]).abs().max()),
                     max_error_before=float((logits[:first + 1] - golden_logits[:first + 1]).abs().max()))
    return found


def _agreement_line(formats: str, a: dict) -> str:
    text = f"  {formats}: {a['agree']} of {a['of']} tokens as eager greedy"
    if a["first"] is None:
        return text + f" (largest logit difference {a['max_error_before']:.4f})"
    kind = "a near-tie" if a["margin"] < a["error"] else "NOT a near-tie: a bug"
    return (text + f"; first departure at new token {a['first']}: eager's top-2 margin {a['margin']:.4f} vs the "
            f"device's logit difference {a['error']:.4f} there ({kind}); the contexts differ after it")


def device_agreement(config, prompt, new_tokens: int, fp32: bool) -> dict:
    """Greedy tokens of a fresh model (seed 0) on the device vs eager, at the default formats or at
    Float32/HiFi4."""
    import copy

    import torch
    from transformers import LlamaForCausalLM

    import pybuda
    from pybuda.transformers.pipeline import run_forward_on_device

    pybuda.set_configuration_options(device_config="wh_n150")
    if fp32:
        pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                         accumulate_df=pybuda.DataFormat.Float32,
                                         math_fidelity=pybuda.MathFidelity.HiFi4)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    golden = _scored_generate(copy.deepcopy(model), prompt, new_tokens)
    run_forward_on_device(model)
    found = agreement(_scored_generate(model, prompt, new_tokens), golden)
    pybuda.shutdown()
    return found


def run_device_vs_eager(args) -> None:
    import torch
    from transformers import LlamaForCausalLM

    import pybuda
    from pybuda.transformers.pipeline import run_forward_on_device

    torch.set_num_threads(args.threads)
    pybuda.set_configuration_options(device_config="wh_n150")
    torch.manual_seed(0)
    config = _llama_config(args.tinyllama)
    model = LlamaForCausalLM(config).eval()
    prompt = torch.randint(3, model.config.vocab_size, (1, 8))
    shape = "TinyLlama-1.1B shape" if args.tinyllama else "tiny Llama 2 x 64"
    path = "no KV cache (whole padded sequence per token)" if args.no_cache else "KV cache on the device"
    print(f"{shape}, random weights, prompt 8, {args.threads} torch thread(s); device: {path}", flush=True)
    lengths = _lengths(args)
    eager = _profile(model, prompt, lengths, "eager", args.rounds)      # before the device forward is installed
    if args.no_cache:
        model.generation_config.use_cache = False
    start = time.perf_counter()
    run_forward_on_device(model)
    if args.no_cache:
        for n in sorted({1, *lengths}):                   # compiles the padded full-sequence programs
            _timed_generate(model, prompt, n)
    else:
        _compile_programs(model, prompt.shape[1], lengths)
    print(f"  device: compiled in {time.perf_counter() - start:.1f} s", flush=True)
    device = _profile(model, prompt, lengths, "device", args.rounds)
    print(f"{'':28}{'device (simulated)':>20}{'eager generate':>18}{'ratio':>8}{'CPU: device':>15}{'eager':>12}"
          f"{'ratio':>8}")
    rows = [("time to first token", device["ttft"], eager["ttft"])]
    rows += [(f"decode per token, {n} new", device[n], eager[n]) for n in lengths]
    for label, d, e in rows:
        print(f"{label:28}{d[0] * 1e3:>17.1f} ms{e[0] * 1e3:>15.2f} ms{d[0] / e[0]:>7.1f}x"
              f"{d[1] * 1e3:>12.1f} ms{e[1] * 1e3:>9.2f} ms{d[1] / e[1]:>7.1f}x")
    growth = [(device[args.long][i] / device[16][i], eager[args.long][i] / eager[16][i]) for i in (0, 1)]
    print(f"per token at {args.long} vs 16 new tokens: device x{growth[0][0]:.2f}, eager x{growth[0][1]:.2f} "
          f"(CPU: x{growth[1][0]:.2f}, x{growth[1][1]:.2f})")
    from buda_runtime_sim import bf16_gemm  # (imported where the simulator is)

    print(bf16_gemm.summary())
    if args.no_cache or args.tinyllama:      # (the agreement runs compile two more models: the tiny one only)
        return
    del model
    pybuda.shutdown()
    print(f"agreement with eager greedy over {args.tokens} new tokens (random weights: near-ties are common):",
          flush=True)
    for formats, fp32 in (("default formats (Float16_b, HiFi3)", False), ("Float32/HiFi4", True)):
        print(_agreement_line(formats, device_agreement(config, prompt, args.tokens, fp32)), flush=True)
    print("  (Float32/HiFi4 is not exact on this device: the multiplier takes TF32 operands and at most 10 of "
          "SrcA's significand bits, buda_runtime_sim/fidelity.py)")


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
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds; the least of each figure is printed")
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
