"""Estimated throughput of reference workloads on gs_e150 and wh_n150, through the user's path.

    python benchmarks/perf_estimates.py [--only resnet] [--boards gs_e150 wh_n150] [--epochs] [--compile-batch 1]

Each model is built from its config with random weights (transformers for BERT/ViT, benchmarks/
cnn_models.py for the CNNs; nothing is downloaded), compiled with tvm_buda.compile_model at the
published run's data format and fidelity, and estimated with CompiledModel.perf_report(board,
microbatch): the program the compiler produced (its partition, formats, fidelities), priced as a
user gets it. The device streams a microbatch one sample at a time (tvm_buda/perf_report.py), so
a batch-1 compile prices any microbatch and no activation at full batch is ever built. Memory is the
weights (BERT-Large: 1.3 GB in float32) plus the compile.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cnn_models import MobileNetV1, MobileNetV2, ResNet50  # noqa: E402

import tvm_buda  # noqa: E402
from buda_runtime_sim.dataformat import DataFormat, MathFidelity  # noqa: E402
from buda_runtime_sim.numerics_config import MixedPrecisionRule  # noqa: E402
from buda_runtime_sim.perf import BOARDS  # noqa: E402
from buda_runtime_sim.perf.costs import peak_tflops  # noqa: E402

DEFAULT_BOARDS = ("gs_e150", "wh_n150")


def bert_large_encoder():
    from transformers import BertConfig, BertModel

    config = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    return BertModel(config).encoder


def vit_base():
    from transformers import ViTConfig, ViTModel

    return ViTModel(ViTConfig(), add_pooling_layer=False)   # ViT-Base/16: 12 layers, 768 wide, 224x224


@dataclass(frozen=True)
class Workload:
    key: str
    title: str
    build: Callable
    sample_shape: tuple          # one sample, batch dim 1


WORKLOADS = (
    Workload("bert", "BERT-Large encoder, seq 384", bert_large_encoder, (1, 384, 1024)),
    Workload("resnet", "ResNet-50 224x224", ResNet50, (1, 3, 224, 224)),
    Workload("mobilenetv1", "MobileNetV1 224x224", MobileNetV1, (1, 3, 224, 224)),
    Workload("mobilenetv2", "MobileNetV2 224x224", MobileNetV2, (1, 3, 224, 224)),
    Workload("vit", "ViT-Base/16 224x224", vit_base, (1, 3, 224, 224)),
)
# Published samples/s (PyBuda on silicon, end to end on the host: first input pushed to last
# output received), keyed (workload key, board) -> (samples/s, microbatch, fidelity of the run).
# Figures: the performance table of github.com/tenstorrent/benchmarking README.md. Run settings:
# its run_benchmark_tt_perf. Wormhole runs Bfp8_b/LoFi over 128 loops at microbatch 64 (BERT),
# 128 (MobileNetV1) or 256 (ResNet, MobileNetV2, ViT). Grayskull runs microbatch 64 with
# --loop_count 1, which is one pass over the dataset's batches (benchmark/common/benchmark_run.py:
# total_samples = loop_count x microbatch x batches), not one microbatch; Bfp8_b/LoFi for BERT and
# ViT; ResNet and the MobileNets without -df (and ResNet without -mf), so benchmark.py's defaults
# apply: -df Fp16_b, -mf HiFi3.
_SOURCE = "tenstorrent/benchmarking README"
BFP8_LOFI = (DataFormat.Bfp8_b, MathFidelity.LoFi)
FP16_HIFI3 = (DataFormat.Float16_b, MathFidelity.HiFi3)
REFERENCES: dict = {
    ("bert", "gs_e150"): (99, 64, BFP8_LOFI), ("bert", "wh_n150"): (118, 64, BFP8_LOFI),
    ("resnet", "gs_e150"): (1410, 64, FP16_HIFI3), ("resnet", "wh_n150"): (2891, 256, BFP8_LOFI),
    ("mobilenetv1", "gs_e150"): (2924, 64, FP16_HIFI3), ("mobilenetv1", "wh_n150"): (3102, 128, BFP8_LOFI),
    ("mobilenetv2", "gs_e150"): (1491, 64, FP16_HIFI3), ("mobilenetv2", "wh_n150"): (2721, 256, BFP8_LOFI),
    ("vit", "gs_e150"): (363, 64, BFP8_LOFI), ("vit", "wh_n150"): (540, 256, BFP8_LOFI),
}


DEFAULT_RUN = (None, 64, BFP8_LOFI)   # boards without a published figure
# The Bfp8_b runs' configure_mixed_precision calls, from each model's file in that repository
# (benchmark/models/<model>/<model>.py, `if data_type == "Bfp8_b"`), as far as our compiled programs
# have the ops they name: BERT's adds, subtracts and reciprocals and ViT's reciprocals out in
# Float16_b (ViT's program has no reciprocal op: softmax is one op), MobileNetV1's adds in Float16_b
# and multiplies at HiFi2, MobileNetV2's adds in Float16_b. Not reproduced: ResNet's
# name_regex="input.*add.*" (PyBuda's op names) and the MobileNets' op_type="depthwise" rules (our
# programs hold depthwise convolutions as grouped Conv2d).
_F16 = DataFormat.Float16_b
PUBLISHED_MIXED_PRECISION: dict = {
    "bert": [MixedPrecisionRule(op_type=t, output_df=_F16) for t in ("add", "subtract", "reciprocal")],
    "vit": [MixedPrecisionRule(op_type="reciprocal", output_df=_F16)],
    "mobilenetv1": [MixedPrecisionRule(op_type="add", output_df=_F16),
                    MixedPrecisionRule(op_type="multiply", math_fidelity=MathFidelity.HiFi2)],
    "mobilenetv2": [MixedPrecisionRule(op_type="add", output_df=_F16)],
}


def compile_workload(workload: Workload, numerics=BFP8_LOFI, batch: int = 1, directory: Path | None = None):
    """compile_model at `numerics` (default data format and math fidelity, as PyBuda's -df/-mf set them),
    with the published run's mixed precision for Bfp8_b."""
    torch.manual_seed(0)
    model = workload.build().eval()
    config = tvm_buda.CompilerConfig()
    config.default_df_override, config.default_math_fidelity = numerics
    if numerics == BFP8_LOFI:
        config.mixed_precision = list(PUBLISHED_MIXED_PRECISION.get(workload.key, ()))
    if directory is not None:
        config.generated_modules_dir = str(directory)
    sample = torch.randn((batch,) + tuple(workload.sample_shape[1:]))
    return tvm_buda.compile_model(model, (sample,), config=config, name=workload.key)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help=f"workload keys: {[w.key for w in WORKLOADS]}")
    parser.add_argument("--boards", nargs="*", default=list(DEFAULT_BOARDS), choices=sorted(BOARDS))
    parser.add_argument("--epochs", action="store_true", help="print each estimate's epoch summary")
    parser.add_argument("--compile-batch", type=int, default=1,
                        help="batch the models are compiled at (the estimate does not depend on it)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)
    chosen = [w for w in WORKLOADS if not args.only or w.key in args.only]
    print("Estimated throughput at each published run's microbatch, data format and fidelity: compile_model, "
          "then perf_report(board, microbatch)\n")
    header = (f"{'workload':<30} {'mb':>4} {'numerics':<15} {'board':<8} {'samples/s':>11} {'epochs':>6} {'util':>6} "
              f"{'TFLOPS':>7}  reference")
    print(header)
    print("-" * len(header))
    ratios = []
    for workload in chosen:
        started = time.perf_counter()
        compiled: dict = {}
        for board in args.boards:
            published, microbatch, numerics = REFERENCES.get((workload.key, board), DEFAULT_RUN)
            if numerics not in compiled:
                compiled.clear()              # one compiled model (and its weights) at a time
                compiled[numerics] = compile_workload(workload, numerics, args.compile_batch)
            report = compiled[numerics].perf_report(board, microbatch)
            ref_text = "no reference"
            if published:
                ratios.append((board, report.samples_per_second / published))
                ref_text = f"{published:,}  (ours {ratios[-1][1]:.2f}x)"
            print(f"{workload.title:<30} {microbatch:>4} {numerics[0].name + '/' + numerics[1].name:<15} {board:<8} "
                  f"{report.samples_per_second:>11,.1f} {len(report.epochs):>6} {100 * report.math_utilisation:>5.1f}% "
                  f"{report.tflops:>7.1f}  {ref_text}", flush=True)
            if args.epochs:
                print(report.summary() + "\n")
        print(f"{'':<30} (compiled and estimated in {time.perf_counter() - started:.1f} s)")
    if ratios:
        print(f"\nAgainst published figures ({_SOURCE}), geometric-mean error (ours/published geomean, range):")
        for label in [None] + sorted({b for b, _ in ratios}):
            chosen = np.array([r for b, r in ratios if label in (None, b)])
            logs = np.log(chosen)
            print(f"  {label or 'all':<8} {len(chosen):>2} figures: {np.exp(np.mean(np.abs(logs))):.2f}x "
                  f"({np.exp(np.mean(logs)):.2f}x, {chosen.min():.2f}x-{chosen.max():.2f}x)")
    print("\nSanity: matrix-unit peak of the model vs published peak TFLOPS (docs/spec/perf_model.md)")
    for board in args.boards:
        b = BOARDS[board]
        model = ", ".join(f"{f.name} {peak_tflops(b, f.phases):.0f}" for f in (MathFidelity.LoFi, MathFidelity.HiFi2,
                                                                              MathFidelity.HiFi4))
        published = ", ".join(f"{k} {v}" for k, v in b.published_tflops.items())
        print(f"  {board}: model {model}  |  published {published}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
