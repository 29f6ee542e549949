"""From an OpGraph to what the balancer needs: which ops take cores, who feeds whom, and each
placed op's cycles on every grid shape of the board.

Ops whose inputs are all weights are constant-folded (they run once, at compile time). Tensor
manipulations (transpose, reshape, ...) take no cores: PyBuda applies them on the edges while
data moves, so a consumer of a TM reads straight from the op that produced the TM's input.
Two ops fuse into the op producing their input, as PyBuda's netlists show (perf_data/
netlist_summary.md): a ReLU, or a ReLU6 / clip at [0, max] (the packer clamps on the way out:
the ResNet-50 and MobileNet netlists hold no relu or clip op) and a bias add after a matmul or conv (their matmuls take the bias as a
third operand). Both only when the producer feeds nothing else.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ..formats import tile_bytes
from . import ops as K
from . import row_reductions
from .boards import Board
from .channels_last import channels_last_matrices
from .config import SMALLEST_GRID_POLICIES, PlacementConfig, lookup
from .costs import Geometry, GridCycles, geometry, grid_cycles, useful_math_cycles
from .ops import OpGraph, PerfOp, tensor_bytes, tensor_tiles

# Kinds whose op on rank-0 tensors is a real scalar op (one tile: a learned scalar's arithmetic,
# DiffLlama's lambda); a matmul, convolution or normalisation without shapes is a missing shape.
_SCALAR_KINDS = frozenset({K.BINARY, K.MULTIPLY, K.SFPU, K.REDUCE, K.MOVE})

PLACED, EDGE_TM, FOLDED, FUSED = "placed", "tm", "folded", "fused"
PACKER_RELU = frozenset({"Relu", "Relu6"})


@dataclass
class PreparedOp:
    op: PerfOp
    role: str
    geom: Geometry | None = None
    table: GridCycles | None = None          # arrays shaped (grid rows, grid cols); [r-1, c-1] is grid r x c
    allowed: np.ndarray | None = None        # grid shapes the balancer may pick
    producers: list[str] = field(default_factory=list)  # placed ops feeding this one
    useful_math: float = 0.0                 # for utilisation, per run
    graph_input_bytes: int = 0               # per run: activations read from the graph's input queues

    @property
    def name(self) -> str:
        return self.op.name

    def cycles(self, grid: tuple[int, int]) -> float:
        return float(self.table.cycles[grid[0] - 1, grid[1] - 1])

    @functools.cached_property
    def output_tiles(self) -> int:
        return tensor_tiles(self.op.output_shape)     # (the balancer asks for the bytes thousands of times)

    def output_bytes(self, fmt=None) -> int:
        return self.output_tiles * tile_bytes(fmt or self.op.data_format)

    def weight_bytes(self) -> int:
        return self.geom.weight_tiles * tile_bytes(self.op.weight_format or self.op.data_format)


@dataclass
class PreparedGraph:
    graph: OpGraph
    board: Board
    ops: list[PreparedOp]
    consumers: dict[str, list[str]]          # placed op -> placed ops reading its output

    @property
    def placed(self) -> list[PreparedOp]:
        return [p for p in self.ops if p.role == PLACED]

    def by_name(self) -> dict[str, PreparedOp]:
        return {p.name: p for p in self.ops}


def prepare(graph: OpGraph, board: Board, config: PlacementConfig) -> PreparedGraph:
    graph = row_reductions.split(channels_last_matrices(graph))
    weights = set(graph.weights)
    source: dict[str, str] = {}              # value name -> placed op producing it (through TMs)
    prepared = []
    grid_r = np.arange(1, board.op_grid_rows + 1)[:, None]
    grid_c = np.arange(1, board.grid_cols + 1)[None, :]
    uses: dict[str, int] = {}
    for op in graph.ops:
        for name in set(op.inputs):
            uses[name] = uses.get(name, 0) + 1
    by_name: dict[str, PreparedOp] = {}
    for op in graph.ops:
        activations = [name for name in op.inputs if name not in weights]
        if not activations and (op.inputs or not op.input_shapes):
            weights.add(op.value)
            prepared.append(PreparedOp(op, FOLDED))
            continue
        producers = list(dict.fromkeys(source[n] for n in activations if n in source))
        if op.kind == K.TM:
            if activations and activations[0] in source:
                source[op.value] = source[activations[0]]
            prepared.append(PreparedOp(op, EDGE_TM, producers=producers))
            continue
        if _fuses(op, activations, source, by_name, uses):
            source[op.value] = source[activations[0]]
            prepared.append(PreparedOp(op, FUSED, producers=producers))
            continue
        if not op.output_shape and not any(op.input_shapes) and op.kind not in _SCALAR_KINDS:
            raise ValueError(f"op {op.name!r} ({op.op_type}) has no static shapes; the perf model needs them")
        geom = geometry(op, weights)
        table = grid_cycles(op, geom, board, grid_r, grid_c, weights_in_dram=config.weights_in_dram(op.name))
        allowed = _allowed_grids(op.name, geom, board, config, grid_r, grid_c, table.fits)
        prepared.append(PreparedOp(op, PLACED, geom, table, allowed, producers, useful_math_cycles(op, geom, board),
                                   _graph_input_bytes(op, weights, source)))
        by_name[op.name] = prepared[-1]
        source[op.value] = op.name
    consumers: dict[str, list[str]] = {p.name: [] for p in prepared if p.role == PLACED}
    for p in prepared:
        if p.role == PLACED:
            for producer in p.producers:
                consumers[producer].append(p.name)
    return PreparedGraph(graph, board, prepared, consumers)


def padded_tiles(tiles: int) -> int:
    """A dimension of `tiles` tiles as PyBuda's padding pass leaves it (tt-buda passes/
    padding_pass_placer.cpp, default criterion BIGGEST_FACTOR_PRIME_10_INCREMENT): while a prime
    factor is above 10, each such factor is raised by one: GPT-2's vocabulary, 1571 tiles (a
    prime), goes 1572 = 2^2 x 3 x 131 -> 1584 = 2^4 x 3^2 x 11 -> 1728 = 2^6 x 3^3; 7 or 98 stay)."""
    factors = _prime_factors(tiles)
    while factors and factors[-1] > 10:
        tiles = math.prod(f + 1 if f > 10 else f for f in factors)
        factors = _prime_factors(tiles)
    return tiles


def _prime_factors(n: int) -> list[int]:
    factors, d = [], 2
    while d * d <= n:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 1
    return factors + ([n] if n > 1 else [])


def _graph_input_bytes(op: PerfOp, weights: set, source: dict) -> int:
    """Bytes of the op's activation inputs that no placed op produces: they come from input queues."""
    return sum(tensor_bytes(shape, op.data_format) for name, shape in zip(op.inputs, op.input_shapes)
               if name not in weights and name not in source and shape)


def _fuses(op: PerfOp, activations: list[str], source: dict, by_name: dict, uses: dict) -> bool:
    """A ReLU, or a bias add after a matmul/conv, whose single activation input only it reads."""
    if len(activations) != 1 or activations[0] not in source or uses.get(activations[0], 0) != 1:
        return False
    if op.op_type in PACKER_RELU or (op.op_type == "Clip" and op.attrs.get("min") == 0):
        return True       # a clip at [0, max] is ReLU6 as torch.export writes it (hardtanh): the packer's relu
    if op.op_type != "Add" or len(op.inputs) != 2 or len(op.input_shapes) != 2:
        return False
    bias = op.input_shapes[1 - op.inputs.index(activations[0])]
    is_vector = math.prod(bias) == max(bias, default=1)       # one value per output column/channel
    producer = by_name.get(source[activations[0]])
    return is_vector and producer is not None and producer.geom.kind in (K.MATMUL, K.CONV)


def _allowed_grids(name: str, geom: Geometry, board: Board, config: PlacementConfig, grid_r, grid_c,
                   fits=None) -> np.ndarray:
    override = lookup(config.op_sizes, name)
    if override is not None:
        r, c = override
        if r > board.op_grid_rows or c > board.grid_cols:
            raise ValueError(f"override_op_size({name!r}, {(r, c)}) does not fit the {board.name} core grid "
                             f"{board.op_grid_rows}x{board.grid_cols} (OP_GRID_ROWS)")
        return (grid_r == r) & (grid_c == c)
    # Legal grids divide the op's tiles (tt-buda balancer/legalizer/legalizer.cpp: grid_pars is the
    # FactorizedShape of the op's parallelization, its row and column tiles, within the device grid),
    # after PyBuda's padding pass has padded awkward dimensions (padded_tiles).
    max_r, max_c = geom.max_grid
    allowed = ((grid_r <= max_r) & (grid_c <= max_c) & (padded_tiles(max_r) % grid_r == 0)
               & (padded_tiles(max_c) % grid_c == 0))
    if config.place_on_one_row:
        allowed &= grid_r == 1
    if config.balancer_policy in SMALLEST_GRID_POLICIES:
        allowed &= (grid_r == 1) & (grid_c == 1)
    if fits is not None and (allowed & fits).any():
        allowed &= fits             # grids whose buffers overflow L1 are illegal, unless every one does
    return allowed
