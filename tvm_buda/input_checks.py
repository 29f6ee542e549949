"""Checks on runtime input values that the compiled graph cannot make itself.

TVM's `take` reads out of bounds on a bad index (its fast mode can crash the process; the
guarded clip mode silently gives wrong rows). So token ids that reach an embedding lookup are
checked against the table size before the VM runs.
"""

from __future__ import annotations

import numpy as np

# Ops that move indices around without changing their values.
_INDEX_PRESERVING = frozenset({"relax.astype", "relax.reshape", "relax.expand_dims", "relax.squeeze",
                               "relax.permute_dims", "relax.flatten", "relax.broadcast_to"})


def index_limits(mod: tvm.IRModule) -> dict[str, int]:
    """Input name -> number of rows of the smallest embedding table its values index."""
    from tvm import relax   # a compile-time analysis: check_indices runs without TVM's compiler

    from .fallback import DataflowGraph

    main = mod["main"]
    graph = DataflowGraph.of(main)
    inputs = set(graph.inputs)
    values = {b.var: b.value for block in main.body.blocks for b in block.bindings}
    limits: dict[str, int] = {}
    for var, op in graph.ops.items():
        if op != "relax.take":
            continue
        call = values[var]
        table, indices = call.args[0], call.args[1]
        axis = int(call.attrs.axis) if call.attrs.axis is not None else 0
        shape = getattr(table.ty, "shape", None)
        if shape is None or not isinstance(indices, relax.Var):
            continue
        source = indices
        while source in values and graph.ops.get(source) in _INDEX_PRESERVING:
            source = values[source].args[0]
        if source in inputs:
            rows = int(shape[axis])
            limits[source.name] = min(rows, limits.get(source.name, rows))
    return limits


def check_indices(model: str, arrays: dict[str, np.ndarray], limits: dict[str, int]) -> None:
    for name, rows in limits.items():
        values = arrays.get(name)
        if values is None or values.size == 0:
            continue
        bad = (values < 0) | (values >= rows)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"{model}: input '{name}' holds index {values[where]} at position {where}, but the embedding "
                f"table it indexes has {rows} rows (valid: 0..{rows - 1}); fix the token ids (check the "
                "tokenizer's vocabulary size)"
            )
