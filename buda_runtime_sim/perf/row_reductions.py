"""Softmax and layernorm as PyBuda places them: a wide part and a one-column tail.

PyBuda decomposes both into backend ops and fuses the ones after the row reduction into one
fused op. A fused op's grid is bounded by the greatest common divisor of all its sub-ops' shapes
(tt-buda pybuda/csrc/balancer/python_bindings.cpp, get_parallelization), and the reduction's
result is one tile column wide, so that fused op can never take more than one column of cores:
in perf_data's BERT-Large netlists the reciprocal-and-multiply of every softmax and the
sqrt-reciprocal-scale-shift of every layernorm sit on r x 1 grids (2x1, 3x1, 4x1), while the
exp (with its scale and mask) and the centring run on wider ones (2x3, 2x6).

split() turns each softmax or layernorm of an OpGraph into two ops: `<name>` (part WIDE: the
elementwise work before the reduction, any grid) and `<name>.tail` (part TAIL: the row
reductions and everything after them, one column of cores), the tail producing the original
value. core_cycles prices each part with the steps it holds.
"""

from __future__ import annotations

from dataclasses import replace

from . import ops as K
from .ops import OpGraph

WIDE, TAIL = "wide", "tail"
SPLIT_KINDS = (K.SOFTMAX, K.LAYERNORM)


def split(graph: OpGraph) -> OpGraph:
    """The graph with every softmax and layernorm as a wide op feeding its one-column tail."""
    if not any(op.kind in SPLIT_KINDS and "part" not in op.attrs for op in graph.ops):
        return graph
    ops = []
    for op in graph.ops:
        if op.kind not in SPLIT_KINDS or "part" in op.attrs or not op.inputs:
            ops.append(op)
            continue
        wide_value = f"{op.value}.wide"
        activation, *params = op.inputs
        ops.append(replace(op, input_shapes=op.input_shapes[:1], inputs=(activation,), output=wide_value,
                           attrs={**op.attrs, "part": WIDE}))
        ops.append(replace(op, name=f"{op.name}.tail", input_shapes=(op.output_shape, *op.input_shapes[1:]),
                           inputs=(wide_value, *params), output=op.value, attrs={**op.attrs, "part": TAIL}))
    return replace(graph, ops=ops)
