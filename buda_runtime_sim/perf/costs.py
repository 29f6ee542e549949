"""Cycles of one op on an r x c grid of cores, for every grid shape at once (numpy arrays).

Each op is first reduced to a tile Geometry: z slices (batch, heads, conv groups) of a work
matrix of rt x ct tiles, plus kt inner tiles (matmul/conv) or kernel taps (pool/depthwise).
Attention's operations (matmuls of two activations, softmax, layernorm) keep their slices (heads)
in every core, as PyBuda's t (every t > 1 op of the BERT-Large netlists in perf_data): an
r x c grid gives each core all z slices of ceil(rt/r) x ceil(ct/c) tiles, and no grid is wider
than ct (col_limit narrower). Other ops lay their slices side by side along the columns (a
convolution's NCHW channels, as PyBuda's hslice/hstack do): each core gets ceil(rt/r) row tiles
of ceil(z*ct/c) column tiles, touching ceil(z/c) slices.
Its core cycles come from the block formulas fitted to silicon measurements (core_cycles.py,
op_model.py; they include unpacking inputs fed over the NoC and packing outputs), its data
cycles from the bytes it must read or write at NOC_BYTES_PER_CYCLE (a floor, and where weights
streamed from DRAM show up). The op takes the larger of the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..constants import TILE_DIM
from ..enums import BackendDevice
from ..formats import tile_bytes
from . import core_cycles, row_reductions
from . import ops as K
from . import data_movement as DM
from .boards import Board
from .ops import PerfOp, ceil_tiles, tensor_tiles, tile_dims

# ---- matrix-unit peak (spec/perf_model.md): the utilisation numerator, not the op cycles --------
# One 32x32x32 tile product per fidelity phase: Wormhole does 8x16 @ 16x16 per cycle, Grayskull 4x16 @ 16x16.
MATMUL_CYCLES_PER_TILE_PHASE = {BackendDevice.Wormhole_B0: 16, BackendDevice.Grayskull: 32}
TILE_MACS = TILE_DIM ** 3


@dataclass(frozen=True)
class Geometry:
    """An op reduced to tiles. A grid splits rt over its rows and ct over its columns."""

    kind: str
    z: int                     # slices every core streams through (batch, heads, conv groups)
    rt: int                    # row tiles of the work matrix
    ct: int                    # column tiles of the work matrix
    kt: int = 1                # inner-dim tiles (matmul/conv) or kernel taps (pool/depthwise)
    act_inputs: int = 1        # activation operands streaming in (eltwise)
    a_streamed: bool = True    # matmul left operand is an activation
    b_streamed: bool = True    # matmul right operand is an activation
    weight_tiles: int = 0      # parameter tiles held by the op (all cores together)
    weight_axis: str = "c"     # weights split over grid columns ("c") or rows ("r")
    out_tiles: int = 0         # output tiles (all cores together)
    macs: int = 0              # logical multiply-accumulates of matmul/conv (utilisation)
    col_limit: int = 0         # most grid columns the op may take (0: no limit); 1 for a row reduction's tail
    t_in_core: bool = False    # every core streams all z slices (attention), else slices lie along columns

    @property
    def max_grid(self) -> tuple[int, int]:
        """The largest useful grid: one row tile and one column tile per core."""
        cols = self.ct if self.t_in_core else self.z * self.ct
        return self.rt, min(cols, self.col_limit) if self.col_limit else cols


def geometry(op: PerfOp, weights) -> Geometry:
    """Reduce an op to tiles; `weights` are value names held on the device (parameters)."""
    kind = op.kind
    is_weight = [name in weights for name in op.inputs] + [False] * (len(op.input_shapes) - len(op.inputs))
    if kind == K.MATMUL:
        return _matmul_geometry(op, is_weight)
    if kind == K.CONV:
        return _conv_geometry(op)
    if kind == K.POOL:
        return _pool_geometry(op)
    # a reduction and a layernorm's weight or bias gradient work on their (first) input's tiles
    shape = op.input_shapes[0] if kind in (K.REDUCE, K.LAYERNORM_BW) else op.output_shape
    z, rt, ct = tile_dims(shape)
    acts = 1 if kind in (K.MOVE, K.REDUCE, K.SOFTMAX, K.LAYERNORM, K.SFPU) else max(1, is_weight.count(False))
    weight_tiles = sum(tensor_tiles(s) for s, w in zip(op.input_shapes, is_weight) if w)
    narrow = op.attrs.get("part") == row_reductions.TAIL     # a row reduction's one-column tail
    return Geometry(kind, z, rt, ct, act_inputs=acts, weight_tiles=weight_tiles, out_tiles=tensor_tiles(op.output_shape),
                    col_limit=1 if narrow else 0,
                    t_in_core=kind in row_reductions.SPLIT_KINDS or kind in (K.SOFTMAX_BW, K.LAYERNORM_BW))


def _matmul_geometry(op: PerfOp, is_weight: list[bool]) -> Geometry:
    a, b = (tuple(s) for s in op.input_shapes[:2])
    m = a[-2] if len(a) >= 2 else 1
    k = a[-1]
    n = b[-1] if len(b) >= 2 else 1
    z = max(1, math.prod(op.output_shape) // (m * n))
    a_weight, b_weight = is_weight[0], is_weight[1]
    weight = b if b_weight else a if a_weight else ()
    return Geometry(K.MATMUL, z, ceil_tiles(m), ceil_tiles(n), ceil_tiles(k), a_streamed=not a_weight,
                    b_streamed=not b_weight, weight_tiles=tensor_tiles(weight) if weight else 0,
                    weight_axis="r" if a_weight and not b_weight else "c",
                    out_tiles=tensor_tiles(op.output_shape), macs=z * m * k * n, t_in_core=not (a_weight or b_weight))


def _nchw(shape, channel_last: bool) -> tuple[int, int, int, int]:
    n, *rest = (int(d) for d in shape)
    if channel_last:
        h, w, c = rest
        return n, c, h, w
    c, h, w = rest
    return n, c, h, w


def _conv_geometry(op: PerfOp) -> Geometry:
    channel_last = bool(op.attrs.get("channel_last", False))
    n, cin, _, _ = _nchw(op.input_shapes[0], channel_last)
    _, cout, ho, wo = _nchw(op.output_shape, channel_last)
    w0, w1, kh, kw = (int(d) for d in op.input_shapes[1])
    # Conv2d weights are [Cout, Cin/g, kh, kw]; Conv2dTranspose weights [Cin, Cout/g, kh, kw], run as a
    # conv over the zero-stuffed input, so every output pixel still takes Cin/g * kh * kw MACs.
    cin_g = w0 // max(1, cout // w1) if op.op_type == "Conv2dTranspose" else w1
    groups = max(1, cin // cin_g)
    rt, taps = ceil_tiles(ho * wo), kh * kw
    macs = n * ho * wo * cin_g * taps * cout
    if groups > 1 and groups == cin:  # depthwise: per-channel taps on the FPU, not a matmul
        ct = ceil_tiles(cout)
        return Geometry(K.DEPTHWISE, n, rt, ct, taps, weight_tiles=taps * ct, out_tiles=n * rt * ct, macs=macs)
    kt, ct = ceil_tiles(cin_g * taps), ceil_tiles(cout // groups)
    return Geometry(K.CONV, n * groups, rt, ct, kt, b_streamed=False, weight_tiles=groups * kt * ct,
                    out_tiles=n * groups * rt * ct, macs=macs)


def _pool_geometry(op: PerfOp) -> Geometry:
    channel_last = bool(op.attrs.get("channel_last", False))
    n, c, h, w = _nchw(op.input_shapes[0], channel_last)
    _, _, ho, wo = _nchw(op.output_shape, channel_last)
    kernel = op.attrs.get("kernel_size")
    if kernel is None:
        taps = math.ceil(h / ho) * math.ceil(w / wo)
    else:
        taps = math.prod(kernel) if isinstance(kernel, (list, tuple)) else int(kernel) ** 2
    rt, ct = ceil_tiles(ho * wo), ceil_tiles(c)
    return Geometry(K.POOL, n, rt, ct, taps, out_tiles=n * rt * ct)


@dataclass
class GridCycles:
    """Per grid shape (arrays shaped like r and c broadcast): cycles per run and their parts."""

    cycles: np.ndarray
    math: np.ndarray
    data: np.ndarray
    weights_resident: np.ndarray
    fits: np.ndarray | None = None     # the op's buffers fit a core's usable L1 (data_movement.l1_usable_bytes)


def grid_cycles(op: PerfOp, geom: Geometry, board: Board, r, c, weights_in_dram: bool = False) -> GridCycles:
    """Cycles for one run of `op` on grids r x c (numpy arrays, broadcast together); `weights_in_dram`
    (default_dram_parameters / override_dram_parameters) streams the weights every run.

    data = the slowest of reading each input operand and writing the output (PyBuda's limiter
    cycles, data_movement.py): activations over the NoC, weights that are not resident from DRAM
    at the per-core rate of the op's cores all reading at once."""
    r, c = np.broadcast_arrays(np.asarray(r, dtype=np.int64), np.asarray(c, dtype=np.int64))
    mr = -(-geom.rt // r)               # row tiles per core
    if geom.t_in_core:
        nz = np.full_like(mr, geom.z)   # slices: every core streams all of them (t)
        cols = -(-geom.ct // c)         # column tiles per core and slice
        nc = nz * cols                  # column tiles per core, across slices
    else:
        nc = -(-(geom.z * geom.ct) // c)
        nz = -(-geom.z // c)            # slices a core touches
        cols = -(-nc // nz)
    tiles = mr * nc
    act_bytes = tile_bytes(op.data_format)
    weight_bytes = tile_bytes(op.weight_format or op.data_format)
    split = c if geom.weight_axis == "c" else r
    weight_share = -(-geom.weight_tiles // split) * weight_bytes
    buffers = l1_buffer_bytes(geom, mr, cols, act_bytes)
    usable = DM.l1_usable_bytes(board)
    resident = (buffers + weight_share <= usable) & (not weights_in_dram)
    math_cycles = core_cycles.op_cycles(op, geom, board, nz, mr, cols, r * c)
    operands, out_tiles = _io_tiles(geom, tiles, mr, nc, nz, r, c)
    data = DM.noc_cycles(out_tiles * act_bytes)
    for operand in operands:
        data = np.maximum(data, DM.noc_cycles(operand * act_bytes))
    streamed = np.where(resident, 0, weight_share) / DM.dram_core_bytes_per_cycle(board, r * c)
    data = np.maximum(data, streamed)
    return GridCycles(np.maximum(math_cycles, data), math_cycles, data, resident, buffers <= usable)


def l1_buffer_bytes(geom: Geometry, rows, cols, act_bytes: int):
    """L1 a core's buffers take, weights aside, double-buffered (buf_size_mb 2 in the netlists): its
    output block of one slice; a matmul's streamed inputs one inner tile deep at least (u_kt = 1);
    other ops' inputs one ublock each."""
    block = rows * cols
    if geom.kind in (K.MATMUL, K.CONV):
        inputs = (rows if geom.a_streamed else 0) + (cols if geom.b_streamed else 0)
    else:
        inputs = geom.act_inputs * np.minimum(block, core_cycles.UBLOCK_MAX_TILES)
    return 2 * (block + inputs) * act_bytes


def _io_tiles(geom: Geometry, tiles, mr, nc, nz, r, c):
    """(tiles of each streamed input operand, output tiles) one core moves per run."""
    kind = geom.kind
    if kind in (K.MATMUL, K.CONV):
        a = [nz * mr * geom.kt] if geom.a_streamed else []
        b = [geom.kt * nc] if geom.b_streamed else []
        return a + b, tiles
    if kind in (K.DEPTHWISE, K.POOL):  # each output tile gathers one input tile per tap
        return [tiles * geom.kt], tiles
    if kind == K.REDUCE:
        return [tiles], -(-geom.out_tiles // (r * c))
    return [tiles] * geom.act_inputs, tiles


def useful_math_cycles(op: PerfOp, geom: Geometry, board: Board) -> float:
    """Matrix-unit cycles the op's logical (unpadded) MACs need: the numerator of utilisation."""
    if geom.kind not in (K.MATMUL, K.CONV):
        return 0.0
    return geom.macs / TILE_MACS * MATMUL_CYCLES_PER_TILE_PHASE[board.arch] * op.math_fidelity.phases


def peak_tflops(board: Board, phases: int = 1) -> float:
    """Matrix-unit peak of the whole board at a fidelity: every core multiplying full tiles."""
    macs_per_cycle = TILE_MACS / (MATMUL_CYCLES_PER_TILE_PHASE[board.arch] * phases)
    return 2 * macs_per_cycle * board.cores * board.clock_hz / 1e12
