"""One core's cycles per run for its share of an op, from the calibrated block formulas (op_model).

costs.grid_cycles hands over, per grid shape, the core's share: t slices of a block of `rows` x
`cols` tiles (plus kt inner tiles for a matmul). This module blocks it the way the backend does
and prices it with op_model.block_cycles:
- ublock: a ub_r x ub_c tile shape of at most UBLOCK_MAX_TILES tiles, the block padded up to
  whole ublocks; the cheapest one is kept (the balancer picks ublocks the same way). Padding
  keeps cycles monotonic in the grid size (the grids themselves divide the op's tiles: prepare.py);
- matmul inner dimension: u_kt = the largest divisor of kt whose double-buffered operand
  blocks fit MATMUL_INPUT_L1_FRACTION of L1, m_k = kt / u_kt; Wormhole may accumulate partial
  sums in L1 (l1_acc), kept when cheaper;
- composite ops (softmax, layernorm) are the sum of the backend ops they decompose into;
- convs with taps or strides, depthwise convs and pools also pay PyBuda's sparse-matmul gather
  of their input taps (op_model.SPARSE_GATHER_CYCLES_PER_TILE), shared by the op's cores;
  measured on Wormhole_B0, it is scaled to Grayskull like the other one-arch ops
  (op_model.matmul_arch_ratio).
All inputs are numpy arrays shaped like the grid table; the result is too.
"""

from __future__ import annotations

import math

import numpy as np

from ..dataformat import DataFormat
from ..enums import BackendDevice
from ..formats import tile_bytes
from . import op_model as M
from . import ops as K
from . import row_reductions

# Dest register: 16 Float16 tiles, half of it per ublock so math and pack overlap; every ublock in
# perf_data/netlist_summary.md has at most 8 tiles.
UBLOCK_MAX_TILES = 8
UBLOCK_SHAPES = [(r, c) for r in range(1, UBLOCK_MAX_TILES + 1) for c in range(1, UBLOCK_MAX_TILES + 1)
                 if r * c <= UBLOCK_MAX_TILES]
_UB_ROWS, _UB_COLS = (np.array(dims, dtype=np.int64) for dims in zip(*UBLOCK_SHAPES))
# L1 share for a matmul's two double-buffered input blocks (rows x u_kt and u_kt x cols tiles).
# An assumption, checked two ways: BERT-Large's QKV matmul on Grayskull gets the netlist's
# m_k 4 x u_kt 8 (netlist_summary.md), and the measured WH block mblock 4x4, ublock 2x4, u_kt 8
# (matmul-bfp8 line 243) fits unsplit.
MATMUL_INPUT_L1_FRACTION = 0.4
ARCH = {BackendDevice.Grayskull: M.GS, BackendDevice.Wormhole_B0: M.WH}

# PyBuda op -> the measured backend op that prices it (closest measured function where none is).
SFPU_OPS = {
    "Exp": "exp", "Gelu": "gelu", "Log": "log", "Sigmoid": "sigmoid", "Tanh": "tanh", "Sqrt": "sqrt",
    "Reciprocal": "reciprocal", "Abs": "abs", "LeakyRelu": "lrelu", "Sin": "sine", "Cos": "cosine",
    "Pow": "power", "Power": "power", "Erf": "gelu", "Silu": "sigmoid", "GeluDerivative": "gelu",
    # Comparisons against a constant: priced as leaky relu, the cheapest measured compare-and-select.
    "Relu": "lrelu", "Relu6": "lrelu", "Clip": "lrelu", "LogicalNot": "lrelu",
}
BINARY_OPS = {"Add": "add", "Subtract": "subtract", "Max": "maximum", "Min": "maximum", "Multiply": "multiply",
              "Divide": "multiply"}
# Binary float coefficients were fitted on Bfp8_b rows; the backend scales their tile term by
# this factor for Float16 formats (perf_data/README.md, "Binary"; an assumption there too).
BINARY_FP16_TILE_FACTOR = 2.0


def _df(fmt: DataFormat) -> str:
    return M.df_class(fmt.name)


def _ublocks(*block):
    """(ur, uc): every ublock shape of UBLOCK_SHAPES along a new leading axis, broadcastable
    against arrays shaped like the `block` arrays (one vectorised pass tries them all)."""
    lead = (-1,) + (1,) * np.broadcast(*block).ndim
    return _UB_ROWS.reshape(lead), _UB_COLS.reshape(lead)


def eltwise(arch: str, op: str, t, rows, cols, df: str, z=1) -> np.ndarray:
    """Cheapest ublock blocking of a t x rows x cols tile block for a single- or two-input op."""
    ur, uc = _ublocks(t, rows, cols)
    mb_m, mb_n = -(-np.asarray(rows) // ur), -(-np.asarray(cols) // uc)
    cycles = M.block_cycles(arch, op, t, mb_m, mb_n, ur, uc, z=z, df=df)
    if df == "fp16" and op in ("add", "subtract", "multiply"):
        coeff = M.coefficients(arch, op, "", df)
        cycles = cycles + (BINARY_FP16_TILE_FACTOR - 1) * coeff[2] * t * mb_m * mb_n * ur * uc
    return cycles.min(axis=0)


def _inner_split(kt: int, rows, cols, fmt: DataFormat, l1_bytes: int):
    """(m_k, u_kt) arrays: the deepest u_kt dividing kt whose input blocks fit the L1 share."""
    budget = l1_bytes * MATMUL_INPUT_L1_FRACTION
    per_kt = 2 * (rows + cols) * tile_bytes(fmt)
    u_kt = np.ones(np.broadcast(rows, cols).shape, dtype=np.int64)
    for d in (d for d in range(2, kt + 1) if kt % d == 0):
        u_kt = np.where(d * per_kt <= budget, d, u_kt)
    return kt // u_kt, u_kt


def matmul(arch: str, t, rows, cols, kt: int, phases: int, fmt: DataFormat, l1_bytes: int) -> np.ndarray:
    m_k, u_kt = _inner_split(kt, rows, cols, fmt, l1_bytes)
    variants = ("", M.L1_ACC) if arch == M.WH else ("",)
    ur, uc = _ublocks(t, rows, cols)
    mb_m, mb_n = -(-np.asarray(rows) // ur), -(-np.asarray(cols) // uc)
    return np.min([M.block_cycles(arch, "matmul", t, mb_m, mb_n, ur, uc, m_k, u_kt, phases, df=_df(fmt),
                                  variant=variant).min(axis=0) for variant in variants], axis=0)


def depthwise(arch: str, t, rows, cols, taps: int, fmt: DataFormat) -> np.ndarray:
    """Depthwise: taps outer steps of one inner tile each (m_k = taps, u_kt = 1), as in the netlists."""
    ur, uc = _ublocks(t, rows, cols)
    return M.block_cycles(arch, "depthwise", t, -(-np.asarray(rows) // ur), -(-np.asarray(cols) // uc), ur, uc,
                          taps, 1, df=_df(fmt)).min(axis=0)


def gathered_tiles(op: K.PerfOp, geom) -> int:
    """Tiles PyBuda's sparse matmul gathers for a conv, depthwise conv or pool (0 if none): the
    im2col operand (slices x row tiles x inner tiles) when the op has taps or changes resolution;
    one input block per tap for depthwise and pool."""
    if geom.kind in (K.DEPTHWISE, K.POOL):
        return geom.z * geom.rt * geom.ct * geom.kt if geom.kt > 1 else 0
    if geom.kind != K.CONV or len(op.input_shapes) < 2:
        return 0
    weight = tuple(int(d) for d in op.input_shapes[1])
    if len(weight) == 4:                       # [Cout, Cin/g, kh, kw]
        taps, cin_g, cout = weight[2] * weight[3], weight[1], weight[0]
    else:                                      # another weight layout: read the attributes
        kernel = op.attrs.get("kernel_size", 1)
        taps = math.prod(kernel) if isinstance(kernel, (list, tuple)) else int(kernel) ** 2
        cin_g, cout = None, None
    groups = max(1, geom.z // max(1, int(op.input_shapes[0][0])))
    same_pixels = cin_g is None or math.prod(op.input_shapes[0]) * cout == math.prod(op.output_shape) * cin_g * groups
    if taps == 1 and same_pixels and op.op_type == "Conv2d":
        return 0        # a 1x1 stride-1 conv is a plain matmul on the activations
    return geom.z * geom.rt * geom.kt


def op_cycles(op: K.PerfOp, geom, board, t, rows, cols, cores=1) -> np.ndarray:
    """Cycles per run of one core holding t slices of rows x cols output tiles of `op`; `cores`
    (the grid's core count) shares the op's tap gather, if it has one."""
    arch, df, kind = ARCH[board.arch], _df(op.data_format), geom.kind
    phases = op.math_fidelity.phases
    gather = -(-gathered_tiles(op, geom) // np.asarray(cores)) * M.SPARSE_GATHER_CYCLES_PER_TILE[df]
    if arch != M.SPARSE_GATHER_ARCH:     # measured on Wormhole_B0: a block of single-tile steps elsewhere
        gather = gather * M.matmul_arch_ratio(arch, t, rows, 1, 1, 1, 1, 1, phases, df)
    if kind in (K.MATMUL, K.CONV):
        return matmul(arch, t, rows, cols, geom.kt, phases, op.data_format, board.l1_bytes) + gather
    if kind == K.DEPTHWISE:
        return depthwise(arch, t, rows, cols, geom.kt, op.data_format) + gather
    if kind == K.POOL:   # gather the taps into z slices, then reduce over z
        return eltwise(arch, "reduce_z", t, rows, cols, df, z=geom.kt) + gather
    if kind in (K.BINARY, K.MULTIPLY):
        return eltwise(arch, BINARY_OPS.get(op.op_type, "add"), t, rows, cols, df)
    if kind == K.SFPU:
        cycles = eltwise(arch, SFPU_OPS.get(op.op_type, "nop"), t, rows, cols, df)
        if op.op_type == "Silu":   # x * sigmoid(x)
            cycles = cycles + eltwise(arch, "multiply", t, rows, cols, df)
        return cycles
    if kind == K.REDUCE:
        return eltwise(arch, "reduce_c", t, rows, cols, df)
    if kind == K.SOFTMAX:
        return _softmax(arch, op, t, rows, cols, df)
    if kind == K.LAYERNORM:
        return _layernorm(arch, op, t, rows, cols, df)
    if kind == K.SOFTMAX_BW:   # grad * y, sum over the row, subtract, times y
        return sum(eltwise(arch, s, t, rows, cols, df) for s in ("multiply", "reduce_c", "subtract", "multiply"))
    if kind == K.LAYERNORM_BW:
        return _layernorm_bw(arch, op, t, rows, cols, df)
    return eltwise(arch, "nop", t, rows, cols, df)   # MOVE: a datacopy


def _softmax(arch, op, t, rows, cols, df):
    """max, subtract, exp, sum over the row, one reciprocal per tile row, multiply; the wide part
    (row_reductions.WIDE) is subtract and exp, the tail the rest."""
    stable = op.attrs.get("stable", True)
    wide = ["exp"] + (["subtract"] if stable else [])
    tail = ["reduce_c", "multiply"] + (["reduce_c"] if stable else [])
    part = op.attrs.get("part")
    steps = wide if part == row_reductions.WIDE else tail if part == row_reductions.TAIL else wide + tail
    per_block = sum(eltwise(arch, s, t, rows, cols, df) for s in steps)
    if part == row_reductions.WIDE:
        return per_block
    return per_block + eltwise(arch, "reciprocal", t, rows, 1, df)


def _layernorm(arch, op, t, rows, cols, df):
    """mean, subtract, square, variance, 1/sqrt per tile row, scale, gamma, beta; the wide part
    (row_reductions.WIDE) is subtract and square, the tail the rest."""
    wide = ["subtract", "multiply"]
    tail = ["reduce_c", "reduce_c", "multiply", "multiply", "add"]
    part = op.attrs.get("part")
    steps = wide if part == row_reductions.WIDE else tail if part == row_reductions.TAIL else wide + tail
    per_block = sum(eltwise(arch, s, t, rows, cols, df) for s in steps)
    if part == row_reductions.WIDE:
        return per_block
    return per_block + eltwise(arch, "sqrt", t, rows, 1, df) + eltwise(arch, "reciprocal", t, rows, 1, df)


def _layernorm_bw(arch, op, t, rows, cols, df):
    """The statistics again (mean, centre, square, variance, 1/sqrt per tile row, xhat), then for
    the input's gradient: grad * gamma, its row mean, times xhat, that row mean, two subtracts and
    the scale by rstd; for the weights': grad * xhat summed over rows; for the bias', one sum."""
    operand = int(op.attrs.get("operand", 0))
    if operand == 2:
        return eltwise(arch, "reduce_r", t, rows, cols, df)
    stats = ["reduce_c", "subtract", "multiply", "reduce_c", "multiply"]
    steps = stats + (["multiply", "reduce_r"] if operand == 1 else
                     ["multiply", "reduce_c", "multiply", "reduce_c", "multiply", "subtract", "subtract", "multiply"])
    per_row = eltwise(arch, "sqrt", t, rows, 1, df) + eltwise(arch, "reciprocal", t, rows, 1, df)
    return sum(eltwise(arch, s, t, rows, cols, df) for s in steps) + per_row
