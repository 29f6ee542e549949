"""Activations between convs counted as the device stores them: [H*W, C] matrices.

PyBuda lowers a convolution to matmuls on one matrix per sample, pixels as rows and channels as
columns, whatever the framework's layout, and the elementwise ops between convs (bias, batch
norm, ReLU, residual adds) run on that same matrix: in PyBuda's ResNet-50 netlist for Wormhole_B0
(a PyTorch, NCHW model), add_69 after a 56x56x256 conv is t 14 x mblock 7x2 x ublock 1x4 on one
core, 98 pixel-row tiles by 8 channel tiles. Counting the tensor's tiles on its last two dims
instead pads every map: NHWC pads W to 32 for every row of pixels (a 7x7 map costs 4.6x its
tiles), NCHW pads H x W to whole tiles for every channel (a 7x7 map costs 21x).
"""

from __future__ import annotations

import math
from dataclasses import replace

from . import ops as K
from .ops import OpGraph, PerfOp

_WINDOW_KINDS = (K.CONV, K.POOL)
_ELEMENTWISE_KINDS = (K.BINARY, K.MULTIPLY, K.SFPU)


def _as_matrix(shape: tuple, channel_last: bool) -> tuple:
    n, *rest = shape
    (h, w, c) = rest if channel_last else (rest[1], rest[2], rest[0])
    return (n, 1, h * w, c)


def channels_last_matrices(graph: OpGraph) -> OpGraph:
    """The graph with every activation between convs shaped [N, 1, H*W, C]."""
    matrices: dict[str, tuple] = {}   # value -> (its 4-d shape, channel_last), for values held as matrices
    ops = []
    for op in graph.ops:
        if op.kind in _WINDOW_KINDS and len(op.output_shape) == 4:
            matrices[op.value] = (tuple(op.output_shape), bool(op.attrs.get("channel_last")))
        elif op.kind in _ELEMENTWISE_KINDS and len(op.output_shape) == 4:
            layout = _matrix_layout(op, matrices)
            if layout is not None:
                ops.append(_reshaped(op, layout))
                matrices[op.value] = (tuple(op.output_shape), layout)
                continue
        ops.append(op)
    return replace(graph, ops=ops)


def _matrix_layout(op: PerfOp, matrices: dict):
    """channel_last of the matrix the op reads at its own full shape, or None if it reads none."""
    for name in op.inputs:
        if name in matrices and matrices[name][0] == tuple(op.output_shape):
            return matrices[name][1]
    return None


def _reshaped(op: PerfOp, channel_last: bool) -> PerfOp:
    """Full-size operands become matrices; per-channel vectors become one row ([1, 1, 1, C])."""
    full = tuple(op.output_shape)
    channels = full[-1] if channel_last else full[1]

    def matrix(shape):
        shape = tuple(shape)
        if shape == full:
            return _as_matrix(shape, channel_last)
        if len(shape) == 4 and math.prod(shape) == channels and channels in shape:
            return (1, 1, 1, channels)
        return shape

    return replace(op, input_shapes=tuple(matrix(s) for s in op.input_shapes), output_shape=_as_matrix(full, channel_last))
