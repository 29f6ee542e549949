"""Encoder-decoder generation on the device vs PyTorch eager, per decoded token (T5 and Whisper).

    python benchmarks/seq2seq.py [--model t5|whisper|both] [--shape tiny|small] [--tokens 32] [--rounds 3]
                                 [--threads 1] [--board wh_n150] [--fp32]

Random weights. tiny: the test models (1 + 1 layers, d_model 32); small: t5-small's shape (6 + 6
layers, d_model 512, 8 heads, vocab 32128) and whisper-tiny's (4 + 4 layers, d_model 384, 6 heads,
80 mel bins, 1500 encoder positions, vocab 51865). Both sides run `model.generate(do_sample=False)`
with a KV cache: the device through tvm_buda.generation.seq2seq (encoder once, decoder steps against
the device's self- and cross-attention caches), eager on a copy with transformers' DynamicCache.
The time per token excludes the encoder and the first step: (time for N tokens - time for 1 token)
/ (N - 1). Rounds alternate between the two so machine load hits both alike; medians are printed.
Compiles happen before timing.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _t5(shape: str):
    from transformers import T5Config, T5ForConditionalGeneration

    if shape == "small":
        config = T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8)
    else:
        config = T5Config(vocab_size=96, d_model=32, d_kv=16, d_ff=64, num_layers=1, num_heads=2,
                          relative_attention_num_buckets=8, initializer_factor=4.0)
    config.decoder_start_token_id, config.pad_token_id, config.eos_token_id = 0, 0, 1
    model = T5ForConditionalGeneration(config).eval()
    import torch

    ids = torch.randint(3, config.vocab_size, (1, 24))
    return model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def _whisper(shape: str):
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    if shape == "small":
        config = WhisperConfig(vocab_size=51865, num_mel_bins=80, encoder_layers=4, decoder_layers=4, d_model=384,
                               encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                               decoder_ffn_dim=1536, max_source_positions=1500, max_target_positions=448)
    else:
        config = WhisperConfig(vocab_size=96, num_mel_bins=16, encoder_layers=1, decoder_layers=1, d_model=32,
                               encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                               decoder_ffn_dim=64, max_source_positions=32, max_target_positions=48, init_std=0.4)
    last = config.vocab_size - 1
    config.pad_token_id = config.bos_token_id = config.eos_token_id = last
    config.decoder_start_token_id, config.begin_suppress_tokens, config.suppress_tokens = last - 1, None, None
    model = WhisperForConditionalGeneration(config).eval()
    model.generation_config.no_timestamps_token_id = last - 2
    features = torch.randn(1, config.num_mel_bins, 2 * config.max_source_positions)
    return model, {"input_features": features}


def _per_token(run, tokens: int) -> float:
    start = time.perf_counter()
    run(1)
    one = time.perf_counter() - start
    start = time.perf_counter()
    run(tokens)
    return (time.perf_counter() - start - one) / (tokens - 1)


def bench(name: str, shape: str, tokens: int, rounds: int, board: str) -> None:
    import torch

    from tvm_buda.generation.seq2seq import on_device

    torch.manual_seed(0)
    model, inputs = (_t5 if name == "t5" else _whisper)(shape)
    eager = copy.deepcopy(model)
    on_device(model)

    def device(n):
        return model.generate(**inputs, max_new_tokens=n, min_new_tokens=n, do_sample=False)

    def cpu(n):
        with torch.no_grad():
            return eager.generate(**inputs, max_new_tokens=n, min_new_tokens=n, do_sample=False)

    start = time.perf_counter()
    out = device(tokens)   # compiles the encoder, the first and the later step
    compile_seconds = time.perf_counter() - start
    golden = cpu(tokens)
    device_times, eager_times = [], []
    for _ in range(rounds):
        eager_times.append(_per_token(cpu, tokens))
        device_times.append(_per_token(device, tokens))
    agreement = (out[0, -tokens:] == golden[0, -tokens:]).float().mean().item()
    d, e = statistics.median(device_times), statistics.median(eager_times)
    runner = model.seq2seq_runner
    step = next(c for key, c in runner.programs.items() if key[0] == "next")
    summary = step.partition_summary()
    print(f"{name} ({shape}), {tokens} new tokens, first run incl. compiles {compile_seconds:.1f} s; decode step: "
          f"{summary.device_fraction:.0%} of ops on the device (host: {', '.join(sorted(set(step.cpu_ops())))})")
    print(f"  per token: simulated device {d * 1e3:.2f} ms | PyTorch eager {e * 1e3:.2f} ms | {d / e:.1f}x eager; "
          f"{agreement:.0%} of tokens as eager")
    from tvm_buda.generation.perf import generation_perf

    first = next(c for key, c in runner.programs.items() if key[0] == "first")
    print(f"  perf model {generation_perf(first, step, device_config=board)} (the cross-attention keys/values are "
          "charged as a transfer per step)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["t5", "whisper", "both"], default="both")
    parser.add_argument("--shape", choices=["tiny", "small"], default="tiny")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: a loaded machine's thread "
                        "pool stalls)")
    parser.add_argument("--board", default="wh_n150")
    parser.add_argument("--fp32", action="store_true", help="Float32 formats and accumulation, HiFi4")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import torch

    import pybuda

    torch.set_num_threads(args.threads)
    if args.fp32:
        pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                         accumulate_df=pybuda.DataFormat.Float32,
                                         math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")
    for name in (["t5", "whisper"] if args.model == "both" else [args.model]):
        bench(name, args.shape, args.tokens, args.rounds, args.board)
    return 0


if __name__ == "__main__":
    sys.exit(main())
