"""Our balancer/placer beside PyBuda's: epochs, cores per epoch and the heaviest matmul placements.

    python benchmarks/perf_netlists.py [--data DIR] [--only bert resnet mobilenetv2]

PyBuda's side is buda_runtime_sim/perf/perf_data/netlist_summary.md (netlists the PyBuda compiler
produced for BERT-Large, ResNet-50 and MobileNet v2, kept in tt-budabackend perf_lib/graph_tests). Ours is
buda_runtime_sim.perf on the same model shapes, data format, fidelity and microbatch (the
benchmarks/perf_estimates.py workloads). For each of PyBuda's heaviest matmul configurations the
table finds our op with the same output tiles and inner depth, and prices both placements with
the calibrated op model (op_model.block_cycles): cycles per input on one core, and cores used.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf_estimates as PE  # noqa: E402
from torch_op_graph import op_graph_from_torch  # noqa: E402

from buda_runtime_sim.dataformat import DataFormat, MathFidelity  # noqa: E402
from buda_runtime_sim.perf import PlacementConfig, calibration, estimate  # noqa: E402
from buda_runtime_sim.perf import op_model as M  # noqa: E402
from buda_runtime_sim.perf.costs import geometry  # noqa: E402

# netlist file -> (our workload key, board); GS ResNet-50 is a bring-up of the first layers only.
NETLISTS = {
    "bert_large_hifi3_fp16b_v2.yaml": ("bert", "gs_e150"),
    "bert_large_lofi_bfp8b_v2.yaml": ("bert", "gs_e150"),
    "bert_large_lofi_bfp8b_v3.yaml": ("bert", "gs_e150"),
    "bert_large_hifi3_fp16b.yaml": ("bert", "wh_n150"),
    "resnet50_hifi3_fp16b.yaml": ("resnet", "wh_n150"),
    "mobilenet_v2_hifi2_fp16b.yaml": ("mobilenetv2", "wh_n150"),
}
PHASES = {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}


@dataclass
class Netlist:
    file: str
    arch: str
    epochs: int = 0
    input_count: int = 0
    cores: tuple = ()                     # min, median, max cores occupied per epoch
    fidelity: str = "LoFi"
    data_format: str = "Bfp8_b"
    matmuls: list = field(default_factory=list)   # dicts of the top-configurations table


def parse_summary(path: Path) -> dict[str, Netlist]:
    found, current = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        head = re.match(r"### `(.+?)` \((\w+)\)", line)
        if head:
            current = found.setdefault(head.group(1), Netlist(head.group(1), head.group(2)))
        elif current is None:
            continue
        elif m := re.search(r"Epochs \(graphs\): \*\*(\d+)\*\*; input_count per epoch: (\d+)", line):
            current.epochs, current.input_count = int(m.group(1)), int(m.group(2))
        elif m := re.search(r"per epoch \(sum of grid sizes\): min (\d+), median (\d+), max (\d+)", line):
            current.cores = tuple(int(v) for v in m.groups())
        elif line.startswith("- Math fidelity over all ops:"):
            counts = re.findall(r"(LoFi|HiFi\d) (\d+)", line)
            current.fidelity = max(counts, key=lambda kv: int(kv[1]))[0]
        elif line.startswith("| ") and "`" in line and current is not None:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[3] not in ("matmul", "depthwise"):
                continue
            row = dict(zip(("rank", "op", "ops", "type", "grid", "t", "mblock", "ublock", "m_k", "u_kt", "in_df",
                            "out_df", "acc", "interm", "fidelity", "l1_acc", "work"), cells))
            current.matmuls.append(row)
            current.data_format = row["in_df"].split("/")[0]
    return found


def _pair(text: str) -> tuple[int, int]:
    a, b = text.split("x")
    return int(a), int(b)


def their_block(row: dict) -> dict:
    gr, gc = _pair(row["grid"])
    mm, mn = _pair(row["mblock"])
    ur, uc = _pair(row["ublock"])
    t, m_k, u_kt = int(row["t"]), int(row["m_k"]), int(row["u_kt"])
    return dict(grid=(gr, gc), t=t, rows=gr * mm * ur, cols=gc * mn * uc, kt=m_k * u_kt,
                cycles=float(M.block_cycles(M.GS if row.get("arch") == "grayskull" else M.WH, row["type"], t, mm, mn, ur,
                                            uc, m_k, u_kt, PHASES[row["fidelity"]], df=M.df_class(row["in_df"]),
                                            variant=M.L1_ACC if row["l1_acc"] == "yes" else "")))


def _ours(report, graph, weights):
    """Our placed matmul/conv ops: (name, grid, out tiles, kt, cycles, block text, kind)."""
    ops = {op.name: op for op in graph.ops}
    out = []
    for row in report.ops:
        if row.grid is None or row.kind not in ("matmul", "conv", "depthwise"):
            continue
        g = geometry(ops[row.name], weights)
        r, c = row.grid
        nz = -(-g.z // c)
        block = f"t{nz} {-(-g.rt // r)}x{-(-(g.z * g.ct) // c) // nz}"
        out.append((row.name, row.grid, g.z * g.rt * g.ct, g.kt, row.cycles, block, g.kind))
    return out


def compare(netlist: Netlist, workload, board: str) -> None:
    df = DataFormat.Bfp8_b if netlist.data_format.lower().startswith("bfp8") else DataFormat.Float16_b
    fidelity = MathFidelity[netlist.fidelity]
    with __import__("torch").device("meta"):
        model = workload.build().eval()
    graph = op_graph_from_torch(model, [workload.sample_shape], workload.title, df, fidelity)
    report = estimate(graph, PlacementConfig(board), netlist.input_count)
    cores = [e.cores for e in report.epochs]
    print(f"\n{netlist.file} ({netlist.arch}) vs ours: {workload.title} on {board}, {df.name}/{fidelity.name}, "
          f"microbatch {netlist.input_count}")
    print(f"  epochs: PyBuda {netlist.epochs}, ours {len(report.epochs)};  cores per epoch min/median/max: "
          f"PyBuda {'/'.join(map(str, netlist.cores))}, ours {min(cores)}/{int(np.median(cores))}/{max(cores)};  "
          f"ours {report.samples_per_second:,.0f} samples/s")
    ours = _ours(report, graph, graph.weights)
    print(f"  {'PyBuda op (count)':<44} {'grid':>5} {'t':>3} {'block':>9} {'cycles':>8} | "
          f"{'our op':<34} {'grid':>5} {'block':>10} {'cycles':>8}")
    for row in netlist.matmuls[:6]:
        row = dict(row, arch=netlist.arch)
        theirs = their_block(row)
        tiles = theirs["t"] * theirs["rows"] * theirs["cols"]
        # Depthwise: PyBuda splits the taps over several ops (m_k 3 of 9), so match output tiles only.
        same_k = (lambda o: True) if row["type"] == "depthwise" else (lambda o: o[3] == theirs["kt"])
        candidates = [o for o in ours if (o[6] == "depthwise") == (row["type"] == "depthwise")]
        match = min(candidates, key=lambda o: (not same_k(o), abs(o[2] - tiles) / tiles), default=None)
        gr, gc = theirs["grid"]
        text = (f"  {row['op'][-36:] + ' (' + row['ops'] + ')':<44} {gr}x{gc:<3} {theirs['t']:>3} "
                f"{row['mblock'] + '/' + row['ublock']:>9} {theirs['cycles']:>8,.0f} | ")
        if match is None or not same_k(match) or abs(match[2] - tiles) > 0.1 * tiles:
            print(text + "no op of ours with these tiles")
            continue
        name, (r, c), _, _, cycles, block, _ = match
        print(text + f"{name[-34:]:<34} {r}x{c:<3} {block:>10} {cycles:>8,.0f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(calibration.DEFAULT_DATA_DIR), help="perf_data folder")
    parser.add_argument("--only", nargs="*", help="workload keys (bert, resnet, mobilenetv2)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)
    netlists = parse_summary(Path(args.data) / "netlist_summary.md")
    workloads = {w.key: w for w in PE.WORKLOADS}
    for file, (key, board) in NETLISTS.items():
        if (not args.only or key in args.only) and file in netlists:
            compare(netlists[file], workloads[key], board)
    return 0


if __name__ == "__main__":
    sys.exit(main())
