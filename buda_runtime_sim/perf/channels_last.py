"""Channels-last activations counted as the device stores them: [H*W, C] matrices.

A conv or pool with channel_last=True works on NHWC activations, which the device holds as one
matrix per sample: pixels as rows, channels as columns (how PyBuda lowered convolutions). The
elementwise ops between convs (bias, batch norm, ReLU, residual adds) run on that same matrix.
Counting an [N, H, W, C] tensor's tiles on its last two dims instead would pad W to 32 for every
row of pixels: a 7x7 map would cost 4.6x its tiles.
"""

from __future__ import annotations

from dataclasses import replace

from . import ops as K
from .ops import OpGraph, PerfOp

_WINDOW_KINDS = (K.CONV, K.POOL)
_ELEMENTWISE_KINDS = (K.BINARY, K.MULTIPLY, K.SFPU)


def _as_matrix(shape: tuple) -> tuple:
    n, h, w, c = shape
    return (n, 1, h * w, c)


def channels_last_matrices(graph: OpGraph) -> OpGraph:
    """The graph with every channels-last activation between convs shaped [N, 1, H*W, C]."""
    matrices: dict[str, tuple] = {}   # value -> its NHWC shape, for values held as matrices
    ops = []
    for op in graph.ops:
        if op.kind in _WINDOW_KINDS and op.attrs.get("channel_last") and len(op.output_shape) == 4:
            matrices[op.value] = tuple(op.output_shape)
        elif op.kind in _ELEMENTWISE_KINDS and len(op.output_shape) == 4 and _reads_matrix(op, matrices):
            ops.append(_reshaped(op))
            matrices[op.value] = tuple(op.output_shape)
            continue
        ops.append(op)
    return replace(graph, ops=ops)


def _reads_matrix(op: PerfOp, matrices: dict) -> bool:
    return any(matrices.get(name) == tuple(op.output_shape) for name in op.inputs)


def _reshaped(op: PerfOp) -> PerfOp:
    """Full-size operands become matrices; per-channel vectors ([1, 1, 1, C]) already are rows."""
    nhwc = tuple(op.output_shape)
    inputs = tuple(_as_matrix(s) if tuple(s) == nhwc else tuple(s) for s in op.input_shapes)
    return replace(op, input_shapes=inputs, output_shape=_as_matrix(nhwc))
