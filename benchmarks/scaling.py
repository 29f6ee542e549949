"""What the perf model predicts on 1, 2, 4 and 8 Wormhole chips: BERT-Large and a 1B-parameter decoder.

    python benchmarks/scaling.py [--chips 1 2 4 8] [--only bert decoder] [--epochs]

Shapes only (models built on the meta device and traced, benchmarks/torch_op_graph.py), Bfp8_b /
LoFi. Two ways to use N chips (docs/scaling.md explains both and where the model is approximate):
- pipeline: one model split over the chips by the placer (epochs fill chip after chip), tensors
  crossing chips over Ethernet (buda_runtime_sim/perf/chips.py);
- data parallel: every chip runs the whole model on 1/N of the microbatch; one PCIe link per
  n300 card (2 chips), the card's second chip one Ethernet hop from it.
Chips are n300 chips (8x8 workers, 288 GB/s and 12 GB of DRAM each): perf.chips.wormhole_system.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from torch_op_graph import op_graph_from_torch  # noqa: E402

from buda_runtime_sim.dataformat import DataFormat, MathFidelity  # noqa: E402
from buda_runtime_sim.formats import tile_bytes  # noqa: E402
from buda_runtime_sim.perf import PlacementConfig, estimate  # noqa: E402
from buda_runtime_sim.perf.chips import WORMHOLE_CHIP_DRAM_BYTES, chips_needed_for_dram, wormhole_system  # noqa: E402
from buda_runtime_sim.perf.data_parallel import data_parallel_report  # noqa: E402

DATA_FORMAT, FIDELITY = DataFormat.Bfp8_b, MathFidelity.LoFi
BYTES_PER_WEIGHT = tile_bytes(DATA_FORMAT) / 1024        # Bfp8_b: 1088 bytes per 32x32 tile


class DecoderBlock(torch.nn.Module):
    """A GPT-style pre-norm decoder layer (causal attention, 4x GELU MLP)."""

    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(hidden), torch.nn.LayerNorm(hidden)
        self.qkv, self.proj = torch.nn.Linear(hidden, 3 * hidden), torch.nn.Linear(hidden, hidden)
        self.up, self.down = torch.nn.Linear(hidden, 4 * hidden), torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        attn = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, h))
        return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))


class Decoder1B(torch.nn.Module):
    """20 layers of width 2048: 1.007e9 parameters in the layers (embeddings stay on the host)."""

    def __init__(self, layers: int = 20, hidden: int = 2048, heads: int = 16):
        super().__init__()
        self.layers = torch.nn.Sequential(*[DecoderBlock(hidden, heads) for _ in range(layers)])

    def forward(self, x):
        return self.layers(x)


def bert_large_encoder():
    from transformers import BertConfig, BertModel

    config = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    return BertModel(config).encoder


# key: (title, builder, per-sample input shape, microbatch)
WORKLOADS = {
    "bert": ("BERT-Large encoder, seq 384", bert_large_encoder, (1, 384, 1024), 64),
    "decoder": ("1B decoder (20 x 2048), prefill seq 512", Decoder1B, (1, 512, 2048), 32),
}


def trace(key: str):
    title, build, shape, _ = WORKLOADS[key]
    with torch.device("meta"):
        model = build().eval()
    params = sum(p.numel() for p in model.parameters())
    return op_graph_from_torch(model, [shape], title, DATA_FORMAT, FIDELITY), params


def pipeline(graph, chips: int, microbatch: int):
    return estimate(graph, PlacementConfig(wormhole_system(chips)), microbatch)


def data_parallel(graph, chips: int, microbatch: int):
    per_chip = estimate(graph, PlacementConfig(wormhole_system(1)), microbatch // chips)
    one_chip = estimate(graph, PlacementConfig(wormhole_system(1)), microbatch)
    return data_parallel_report(per_chip, one_chip, chips, pcie_links=math.ceil(chips / 2), hops=min(chips - 1, 1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chips", nargs="*", type=int, default=[1, 2, 4, 8])
    parser.add_argument("--only", nargs="*", choices=sorted(WORKLOADS))
    parser.add_argument("--epochs", action="store_true", help="print each pipeline estimate's epoch summary")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)
    print(f"Predicted throughput on N Wormhole chips (n300 chips), {DATA_FORMAT.name} / {FIDELITY.name} "
          "(buda_runtime_sim.perf)\n")
    for key in args.only or list(WORKLOADS):
        started = time.perf_counter()
        graph, params = trace(key)
        title, _, _, microbatch = WORKLOADS[key]
        weight_gb = params * BYTES_PER_WEIGHT / 1e9
        print(f"{title}: {params / 1e6:,.0f} M parameters, {weight_gb:.2f} GB of weights in {DATA_FORMAT.name} "
              f"(chips needed to hold them in {WORMHOLE_CHIP_DRAM_BYTES / 2**30:.0f} GiB DRAM each: "
              f"{chips_needed_for_dram(params * BYTES_PER_WEIGHT)}), microbatch {microbatch}")
        head = (f"{'chips':>5} {'pipeline samples/s':>18} {'epochs':>6} {'eth MB/run':>10} {'max MB/chip':>11} "
                f"{'x1':>5}   {'data-parallel samples/s':>23} {'x1':>5}")
        print(head)
        print("-" * len(head))
        base = None
        for chips in args.chips:
            report = pipeline(graph, chips, microbatch)
            base = base or report.samples_per_second
            eth = sum(t.bytes for t in report.ethernet) / 1e6
            if microbatch % chips == 0:
                dp = data_parallel(graph, chips, microbatch)
                dp_text = f"{dp.samples_per_second:>23,.1f} {dp.samples_per_second / base:>5.2f}"
            else:
                dp_text = f"{'(batch not divisible)':>29}"
            heaviest = max(report.chip_weight_bytes.values(), default=0) / 1e6
            print(f"{chips:>5} {report.samples_per_second:>18,.1f} {len(report.epochs):>6} {eth:>10,.1f} "
                  f"{heaviest:>11,.0f} {report.samples_per_second / base:>5.2f}   {dp_text}")
            if args.epochs:
                print(report.summary() + "\n")
        print(f"({len(graph.ops)} ops, traced and estimated in {time.perf_counter() - started:.1f} s)\n")
    print_dram_table()
    return 0


def print_dram_table() -> None:
    """Chips whose DRAM can hold a decoder's weights alone (activations, caches and queues need more)."""
    per_chip = WORMHOLE_CHIP_DRAM_BYTES / 2**30
    print(f"Chips needed just to hold the weights ({per_chip:.0f} GiB of DRAM per Wormhole chip; Galaxy: 32 chips)")
    print(f"{'parameters':>10} {'Bfp8_b GB':>9} {'chips':>5} {'Float16_b GB':>12} {'chips':>5}")
    for billions in (1, 7, 13, 70):
        params = billions * 1e9
        bfp8, fp16 = params * BYTES_PER_WEIGHT, params * 2
        print(f"{billions:>9}B {bfp8 / 1e9:>9.1f} {chips_needed_for_dram(bfp8):>5} {fp16 / 1e9:>12.1f} "
              f"{chips_needed_for_dram(fp16):>5}")


if __name__ == "__main__":
    sys.exit(main())
