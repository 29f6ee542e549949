"""estimate(): an OpGraph on a board -> a PerfReport (balance, place, cost epochs, add host transfers)."""

from __future__ import annotations

import math

from .balancer import balance
from .boards import PCIE_D2H_BYTES_PER_S, PCIE_H2D_BYTES_PER_S
from .chips import check_chip_breaks, ethernet_transfers, transfer_seconds
from .config import PlacementConfig
from .ops import OpGraph, is_known, tensor_bytes, tensor_tiles
from .prepare import EDGE_TM, FOLDED, FUSED, PLACED, prepare
from .report import ChipEpochRow, EpochRow, EthernetRow, OpRow, PerfReport, TransferRow

PCIE_BYTES_PER_S = {"h2d": PCIE_H2D_BYTES_PER_S, "d2h": PCIE_D2H_BYTES_PER_S}
NOTES = {EDGE_TM: "tm on edge", FOLDED: "constant-folded", FUSED: "fused into its producer"}


def estimate(graph: OpGraph, config: PlacementConfig | None = None, microbatch: int | None = None) -> PerfReport:
    """Estimate throughput of `graph` at `microbatch` samples (default: one run's samples)."""
    config = config or PlacementConfig()
    board = config.board()
    microbatch = int(microbatch or graph.samples_per_run)
    if microbatch < 1:
        raise ValueError(f"microbatch must be at least 1, got {microbatch}")
    runs = math.ceil(microbatch / graph.samples_per_run)
    check_chip_breaks(graph, config.chip_breaks)
    prepared = prepare(graph, board, config)
    plan = balance(prepared, config, runs)
    placed = {pl.op: pl for pl in plan.placements}
    epoch_rows = [_epoch_row(e, board, microbatch, runs) for e in plan.epochs]
    transfers = [TransferRow(t.label, t.direction, t.bytes, runs * t.bytes / PCIE_BYTES_PER_S[t.direction])
                 for t in graph.transfers]
    device_cycles = sum(e.total_cycles for e in plan.epochs)
    device_seconds = device_cycles / board.clock_hz
    transfer_seconds = sum(t.seconds for t in transfers)
    total = device_seconds + transfer_seconds
    useful = sum(e.useful_math_cycles for e in plan.epochs) * runs
    macs = sum(p.geom.macs for p in prepared.placed) * runs
    return PerfReport(
        model=graph.name, board=board, config=config, microbatch=microbatch, samples_per_run=graph.samples_per_run,
        runs=runs, ops=[_op_row(p, placed.get(p.name)) for p in prepared.ops], epochs=epoch_rows,
        transfers=transfers, graph_breaks=graph.graph_breaks, device_seconds=device_seconds,
        transfer_seconds=transfer_seconds, samples_per_second=microbatch / total if total else float("inf"),
        math_utilisation=useful / (board.op_cores * device_cycles) if device_cycles else 0.0,
        tflops=2 * macs / total / 1e12 if total else 0.0,
        chip_epochs=chip_epoch_rows(plan), ethernet=ethernet_rows(prepared, plan, board, runs),
        chip_weight_bytes=_chip_weight_bytes(prepared, placed))


def _op_row(p, placement) -> OpRow:
    op = p.op
    placed_op = p.role == PLACED        # tiles of a placed op: of its work matrix (a conv's im2col output)
    row = OpRow(op.name, op.op_type, p.geom.kind if placed_op else p.role, None,
                p.geom.out_tiles if placed_op else tensor_tiles(op.output_shape),
                op.data_format.name, op.math_fidelity.name, note=NOTES.get(p.role, ""),
                input_bytes=sum(tensor_bytes(s, op.data_format) for s in op.input_shapes if s),
                output_bytes=tensor_bytes(op.output_shape, op.data_format) if op.output_shape else 0)
    if placement is None:
        return row
    r, c = placement.grid
    row.grid, row.epoch, row.chip, row.row, row.col = placement.grid, placement.epoch, placement.chip, placement.row, placement.col
    row.cycles = float(p.table.cycles[r - 1, c - 1])
    row.math_cycles = float(p.table.math[r - 1, c - 1])
    row.data_cycles = float(p.table.data[r - 1, c - 1])
    row.bound = "math" if row.math_cycles >= row.data_cycles else "data"
    if not p.table.weights_resident[r - 1, c - 1]:
        row.note = "weights streamed"
    elif not is_known(op.op_type):
        row.note = "unknown op: costed as data movement"
    return row


def _epoch_row(e, board, microbatch: int, runs: int) -> EpochRow:
    seconds = e.total_cycles / board.clock_hz
    busy = board.op_cores * e.total_cycles
    return EpochRow(e.index, e.subgraph, len(e.ops), e.chips, e.cores, e.slowest_op, e.slowest_op_cycles,
                    e.dram_cycles, e.stage_cycles, e.fill_cycles, e.prologue_cycles, e.switch_cycles,
                    e.total_cycles, seconds, microbatch / seconds, e.useful_math_cycles * runs / busy,
                    e.ethernet_cycles)


def chip_epoch_rows(plan) -> list[ChipEpochRow]:
    """Each epoch's share on each chip it uses."""
    rows = []
    for e in plan.epochs:
        members = [pl for pl in plan.placements if pl.epoch == e.index]
        for chip in sorted({pl.chip for pl in members}):
            mine = [pl for pl in members if pl.chip == chip]
            slowest = max(mine, key=lambda pl: e.op_cycles[pl.op])
            rows.append(ChipEpochRow(e.index, chip, len(mine), sum(pl.cores for pl in mine), slowest.op,
                                     e.op_cycles[slowest.op]))
    return rows


def ethernet_rows(prepared, plan, board, runs: int) -> list[EthernetRow]:
    return [EthernetRow(t.epoch, t.producer, t.consumer, t.src_chip, t.dst_chip, t.bytes,
                        runs * transfer_seconds(t.bytes, t.hops)) for t in ethernet_transfers(prepared, plan.placements)]


def _chip_weight_bytes(prepared, placed) -> dict:
    """Parameters in each chip's DRAM: an op's weights live with the chip it is placed on."""
    found: dict = {}
    for p in prepared.placed:
        if p.geom.weight_tiles and p.name in placed:
            chip = placed[p.name].chip
            found[chip] = found.get(chip, 0) + p.weight_bytes()
    return found
