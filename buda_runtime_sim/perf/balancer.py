"""The balancer: a grid shape per op, chosen so that each epoch's ops run at about the same speed.

An epoch runs at its slowest op, so cores given to an op faster than that are wasted. The
balancer therefore tries target stage times T. For each T every op takes the smallest grid
(fewest cores) that reaches T, or its fastest grid if none does; the placer packs the ops into
epochs and the epochs are costed. The T with the smallest total wins. Small T means fast but big
ops and many epochs; large T few epochs of slow ops. The Ts tried are every op's frontier cycle
counts, the only places where a pick changes, so no plan of the family is missed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .config import PlacementConfig
from .epochs import EpochCost, epoch_costs, epoch_op_cycles
from .placer import Placement, place
from .prepare import PreparedGraph, PreparedOp


@dataclass
class _Frontier:
    """An op's useful grids: fewer cores never faster; sorted by cores, cycles strictly falling."""

    grids: list[tuple[int, int]]
    cycles: np.ndarray

    @classmethod
    def of(cls, op: PreparedOp) -> "_Frontier":
        rows, cols = np.nonzero(op.allowed)
        if rows.size == 0:
            raise ValueError(f"op {op.name!r}: no grid shape is allowed on this board")
        cycles = op.table.cycles[rows, cols]
        cores = (rows + 1) * (cols + 1)
        order = np.lexsort((cycles, cores))
        grids, kept = [], []
        for i in order:
            if not kept or cycles[i] < kept[-1]:
                grids.append((int(rows[i]) + 1, int(cols[i]) + 1))
                kept.append(float(cycles[i]))
        return cls(grids, np.asarray(kept))

    def pick(self, target: float) -> tuple[int, int]:
        """The fewest-cores grid at or under `target` cycles; the fastest grid if none is."""
        index = int(np.searchsorted(-self.cycles, -target, side="left"))
        return self.grids[min(index, len(self.grids) - 1)]


@dataclass
class Plan:
    placements: list[Placement]
    epochs: list[EpochCost]
    target_cycles: float

    @property
    def total_cycles(self) -> float:
        return sum(e.total_cycles for e in self.epochs)


def balance(prepared: PreparedGraph, config: PlacementConfig, runs: int) -> Plan:
    ops = prepared.placed
    if not ops:
        return Plan([], [], 0.0)
    frontiers = [_Frontier.of(op) for op in ops]
    return _fill_spare_cores(prepared, config, runs, frontiers, best_target_plan(prepared, config, runs, frontiers))


def best_target_plan(prepared: PreparedGraph, config: PlacementConfig, runs: int, frontiers) -> Plan:
    """The cheapest plan over every stage-time target (_targets), before spare cores are filled."""
    best = None
    for target in _targets(frontiers):
        schedule = [(op.name, f.pick(target), op.op.subgraph) for op, f in zip(prepared.placed, frontiers)]
        placements = place(schedule, prepared.board, config.epoch_breaks, config.chip_breaks)
        plan = Plan(placements, epoch_costs(prepared, placements, runs), target)
        if best is None or plan.total_cycles < best.total_cycles:
            best = plan
    return best


def _fill_spare_cores(prepared, config, runs, frontiers, plan: Plan) -> Plan:
    """Spend each epoch's idle cores on its slowest op, as PyBuda's balancer fills an epoch
    (perf_data/netlist_summary.md: a median of 59 of 64 and 114 of 120 cores busy per
    epoch). The slowest op, its DRAM queues counted, takes the next faster grid with which the
    epoch still fits on the chip; ops pinned by override_op_size and epochs spanning chips are
    left alone."""
    board = prepared.board
    frontier_of = {op.name: f for op, f in zip(prepared.placed, frontiers)}
    pinned = {op.name for op in prepared.placed if int(op.allowed.sum()) == 1}
    subgraph = {op.name: op.op.subgraph for op in prepared.placed}
    order = {op.name: i for i, op in enumerate(prepared.placed)}
    by_epoch: dict[int, list[Placement]] = {}
    for pl in plan.placements:
        by_epoch.setdefault(pl.epoch, []).append(pl)
    placements = list(plan.placements)
    for index, members in sorted(by_epoch.items()):
        names = [pl.op for pl in members]
        grids = {pl.op: pl.grid for pl in members}
        others = [pl for pl in placements if pl.epoch != index]
        layout = members
        while not any(pl.chip for pl in layout):
            cycles = epoch_op_cycles(prepared, others + layout, index)
            slowest = max(names, key=cycles.__getitem__)
            if slowest in pinned:
                break
            found = _faster_layout(frontier_of[slowest], slowest, grids, names, subgraph, board)
            if found is None:
                break
            grids, layout = found[0], [replace(pl, epoch=index) for pl in found[1]]
        placements = others + [replace(pl, epoch=index) for pl in layout]
    placements.sort(key=lambda pl: order[pl.op])
    filled = Plan(placements, epoch_costs(prepared, placements, runs), plan.target_cycles)
    return filled if filled.total_cycles <= plan.total_cycles else plan


def _faster_layout(frontier: _Frontier, op: str, grids: dict, names: list, subgraph: dict, board):
    """The op's first faster frontier grid with which the epoch still fits one chip: (grids, layout)."""
    for grid in frontier.grids[_next_faster(frontier, grids[op]):]:
        trial = dict(grids, **{op: grid})
        layout = place([(n, trial[n], subgraph[n]) for n in names], board)
        if not any(pl.epoch or pl.chip for pl in layout):
            return trial, layout
    return None


def _next_faster(frontier: _Frontier, grid: tuple[int, int]) -> int:
    """Index of the frontier grid after `grid` (past the end if `grid` is the fastest or not on it)."""
    return frontier.grids.index(grid) + 1 if grid in frontier.grids else len(frontier.grids)


def _targets(frontiers: list[_Frontier]) -> list[float]:
    """Every distinct frontier cycle count. An op's pick changes only where the target crosses one
    of its frontier's cycle counts, so these targets give every plan the family has. (48 targets
    spaced geometrically missed some: the total over targets is jagged, and BERT-Large on
    Grayskull at the published mixed precision got a 169-epoch plan at half the throughput of the
    25-epoch one, the epoch count of PyBuda's netlist for that run; docs/perf_model.md.)"""
    return sorted({float(c) for f in frontiers for c in f.cycles.tolist()})
