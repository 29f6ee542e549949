"""What an epoch costs once its ops are placed.

The ops of an epoch form a pipeline that every run streams through: after the first run has
filled it (the longest chain of op cycles), one run leaves every `stage` cycles, the stage being
the slowest op, the epoch's DRAM traffic or its busiest chip-to-chip link (chips.py), whichever
is slower. Before that, the epoch's
resident weights are loaded from DRAM (prologue) and the cores are reconfigured (switch).

    epoch cycles = switch + prologue + fill + (runs - 1) * stage
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .chips import ethernet_transfers, link_cycles

# Reconfiguring every core for a new epoch (kernels, pipes, queues). An assumption, not a
# published figure: about 20 us at 1 GHz, the order of loading small binaries to all cores.
EPOCH_SWITCH_CYCLES = 20_000


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
        cycles = {n: ops[n].cycles(grids[n]) for n in names}
        slowest = max(names, key=cycles.__getitem__)
        dram_bytes, prologue_bytes = _dram_traffic(prepared, ops, names, epoch_of, grids)
        dram = dram_bytes / board.dram_bytes_per_cycle
        ethernet, latency = links.get(index, (0.0, 0.0))
        stage = max(cycles[slowest], dram, ethernet)
        fill = max(_longest_chain(ops, names, cycles), dram, ethernet) + latency
        prologue = prologue_bytes / board.dram_bytes_per_cycle
        total = EPOCH_SWITCH_CYCLES + prologue + fill + (runs - 1) * stage
        costs.append(EpochCost(
            index, ops[names[0]].op.subgraph, names, len({pl.chip for pl in members}),
            sum(pl.cores for pl in members), slowest, cycles[slowest], dram, stage, fill, prologue,
            EPOCH_SWITCH_CYCLES, total, sum(ops[n].useful_math for n in names), cycles, ethernet))
    return costs


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
        if any(epoch_of[c] != epoch for c in prepared.consumers[name]):
            per_run += op.output_bytes()
        r, c = grids[name]
        if op.geom.weight_tiles:
            if op.table.weights_resident[r - 1, c - 1]:
                prologue += op.weight_bytes()
            else:
                per_run += op.weight_bytes()
    return per_run, prologue


def _longest_chain(ops, names, cycles) -> float:
    """Cycles for the first run to get through the epoch: the longest producer chain."""
    members = set(names)
    done: dict[str, float] = {}
    for name in names:  # schedule order is a topological order
        before = [done[p] for p in ops[name].producers if p in members and p in done]
        done[name] = cycles[name] + max(before, default=0.0)
    return max(done.values())
