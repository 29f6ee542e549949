"""What an epoch costs once its ops are placed.

The ops of an epoch form a pipeline that every run streams through: after the first run has
filled it (the longest chain of op cycles), one run leaves every `stage` cycles, the stage being
the slowest op, the epoch's DRAM traffic or its busiest chip-to-chip link (chips.py), whichever
is slower. Before that, the epoch's
resident weights are loaded from DRAM (prologue) and the cores load the epoch's binaries
(switch: data_movement.epoch_switch_cycles, from DRAM, or from the host when the program has
more epochs than the device's epoch binary cache holds).

An op that reads a tensor from another epoch or from an input queue, or writes one for another
epoch or an output queue, does so from DRAM: each of its cores at the per-core DRAM rate of
data_movement.py, shared by every core of the epoch that touches DRAM (PyBuda's
dram_access_core_count). Its cycles are the larger of that and its grid cycles (costs.py).

    epoch cycles = switch + prologue + fill + (runs - 1) * stage
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import data_movement as DM
from .chips import ethernet_transfers, link_cycles


@dataclass
class EpochCost:
    index: int
    subgraph: int
    ops: list[str]
    chips: int
    cores: int
    slowest_op: str
    slowest_op_cycles: float
    dram_cycles: float                 # per run
    stage_cycles: float                # per run, steady state
    fill_cycles: float
    prologue_cycles: float
    switch_cycles: float
    total_cycles: float                # for all runs of the microbatch
    useful_math_cycles: float          # per run, summed over the epoch's ops
    op_cycles: dict = field(default_factory=dict)
    ethernet_cycles: float = 0.0       # per run, on the epoch's busiest chip-to-chip link


def epoch_costs(prepared, placements, runs: int) -> list[EpochCost]:
    """prepared: PreparedGraph; placements: one Placement per placed op."""
    board = prepared.board
    ops = {p.name: p for p in prepared.placed}
    epoch_of = {pl.op: pl.epoch for pl in placements}
    grids = {pl.op: pl.grid for pl in placements}
    links = link_cycles(ethernet_transfers(prepared, placements), board.clock_hz)
    by_epoch: dict[int, list] = {}
    for pl in placements:
        by_epoch.setdefault(pl.epoch, []).append(pl)
    costs = []
    for index in sorted(by_epoch):
        members = by_epoch[index]
        names = [pl.op for pl in members]
        cycles = _op_cycles(prepared, ops, members, epoch_of)
        slowest = max(names, key=cycles.__getitem__)
        dram_bytes, prologue_bytes = _dram_traffic(prepared, ops, names, epoch_of, grids)
        dram = dram_bytes / DM.dram_bytes_per_cycle(board)
        ethernet, latency = links.get(index, (0.0, 0.0))
        stage = max(cycles[slowest], dram, ethernet)
        fill = max(_longest_chain(ops, names, cycles), dram, ethernet) + latency
        prologue = prologue_bytes / DM.dram_bytes_per_cycle(board)
        switch = DM.epoch_switch_cycles(board, sum(pl.cores for pl in members), len(by_epoch))
        total = switch + prologue + fill + (runs - 1) * stage
        costs.append(EpochCost(
            index, ops[names[0]].op.subgraph, names, len({pl.chip for pl in members}),
            sum(pl.cores for pl in members), slowest, cycles[slowest], dram, stage, fill, prologue,
            switch, total, sum(ops[n].useful_math for n in names), cycles, ethernet))
    return costs


def epoch_op_cycles(prepared, placements, epoch: int) -> dict[str, float]:
    """Cycles per run of each op of one epoch, its DRAM queue traffic included."""
    ops = {p.name: p for p in prepared.placed}
    epoch_of = {pl.op: pl.epoch for pl in placements}
    return _op_cycles(prepared, ops, [pl for pl in placements if pl.epoch == epoch], epoch_of)


def _op_cycles(prepared, ops, members, epoch_of) -> dict[str, float]:
    """The larger of each op's grid cycles and its DRAM queue traffic at the per-core DRAM rate,
    every core of the epoch that touches DRAM sharing the channels."""
    queue_bytes = {pl.op: _queue_bytes(prepared, ops, ops[pl.op], epoch_of, pl.grid) for pl in members}
    dram_cores = sum(pl.cores for pl in members if max(queue_bytes[pl.op]) > 0)
    per_core = DM.dram_core_bytes_per_cycle(prepared.board, max(1, dram_cores))
    return {pl.op: max(ops[pl.op].cycles(pl.grid), max(queue_bytes[pl.op]) / pl.cores / per_core) for pl in members}


def _queue_bytes(prepared, ops, op, epoch_of, grid) -> tuple[float, ...]:
    """Bytes per run the op moves through DRAM queues, one entry per operand and its output: tensors
    from other epochs or input queues, weights that are not resident (every core along the split
    reads its own copy of its share), and its output when another epoch or an output queue takes it."""
    epoch = epoch_of[op.name]
    reads = [float(ops[p].output_bytes(op.op.data_format)) for p in op.producers if epoch_of[p] != epoch]
    consumers = prepared.consumers[op.name]
    write = op.output_bytes() if not consumers or any(epoch_of[c] != epoch for c in consumers) else 0
    return tuple(reads) + (float(op.graph_input_bytes), float(write), _streamed_weight_bytes(op, grid))


def _streamed_weight_bytes(op, grid) -> float:
    """Weight bytes per run the op's cores read from DRAM (0 when the weights are resident in L1)."""
    r, c = grid
    if not op.geom.weight_tiles or op.table.weights_resident[r - 1, c - 1]:
        return 0.0
    return float(op.weight_bytes() * (r if op.geom.weight_axis == "c" else c))


def _dram_traffic(prepared, ops, names, epoch_of, grids) -> tuple[float, float]:
    """(bytes per run, prologue bytes): tensors crossing the epoch boundary, streamed and resident weights."""
    epoch = epoch_of[names[0]]
    per_run, prologue = 0.0, 0.0
    read = set()
    for name in names:
        op = ops[name]
        for producer in op.producers:
            if epoch_of[producer] != epoch and producer not in read:
                read.add(producer)
                per_run += ops[producer].output_bytes(op.op.data_format)
        if not prepared.consumers[name] or any(epoch_of[c] != epoch for c in prepared.consumers[name]):
            per_run += op.output_bytes()
        per_run += op.graph_input_bytes
        streamed = _streamed_weight_bytes(op, grids[name])
        per_run += streamed
        if op.geom.weight_tiles and not streamed:
            prologue += op.weight_bytes()
    return per_run, prologue


def _longest_chain(ops, names, cycles) -> float:
    """Cycles for the first run to get through the epoch: the longest producer chain."""
    members = set(names)
    done: dict[str, float] = {}
    for name in names:  # schedule order is a topological order
        before = [done[p] for p in ops[name].producers if p in members and p in done]
        done[name] = cycles[name] + max(before, default=0.0)
    return max(done.values())
