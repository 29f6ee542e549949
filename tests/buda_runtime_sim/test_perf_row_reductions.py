"""Softmax/layernorm as a wide part and a one-column tail; attention keeps its heads in every core."""

import pytest

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.perf import OpGraph, PerfOp, PlacementConfig, estimate, get_board
from buda_runtime_sim.perf import core_cycles, row_reductions
from buda_runtime_sim.perf.costs import geometry, grid_cycles

GS = get_board("gs_e150")
BFP8 = dict(data_format=DataFormat.Bfp8_b, math_fidelity=MathFidelity.LoFi)


def attention(heads=16, seq=384, head_dim=64):
    """q @ k^T -> softmax -> @ v, per sample, heads as the leading dim."""
    q, s = (1, heads, seq, head_dim), (1, heads, seq, seq)
    return OpGraph([
        PerfOp("qk", "Matmul", (q, (1, heads, head_dim, seq)), s, ("q", "k"), **BFP8),
        PerfOp("sm", "Softmax", (s,), s, ("qk",), **BFP8),
        PerfOp("av", "Matmul", (s, q), q, ("sm", "v"), **BFP8),
    ], set(), name="attention")


def test_softmax_becomes_a_wide_op_feeding_its_one_column_tail():
    graph = row_reductions.split(attention())
    names = [op.name for op in graph.ops]
    assert names == ["qk", "sm", "sm.tail", "av"]
    wide, tail = graph.ops[1], graph.ops[2]
    assert (wide.attrs["part"], tail.attrs["part"]) == (row_reductions.WIDE, row_reductions.TAIL)
    assert tail.inputs == (wide.value,) and tail.value == "sm" and graph.ops[3].inputs[0] == "sm"
    report = estimate(attention(), PlacementConfig("gs_e150"), microbatch=8)
    assert report.op("sm.tail").grid[1] == 1 and report.op("sm").grid[1] >= 1
    assert report.op("av").epoch is not None


@pytest.mark.parametrize("op_type, shape", [("Softmax", (1, 16, 384, 384)), ("Layernorm", (1, 384, 1024))])
def test_the_two_parts_cost_what_the_whole_op_costs(op_type, shape):
    # On one grid the wide part plus the tail are exactly the undivided op's steps.
    whole = PerfOp("x", op_type, (shape,), shape, ("a",), **BFP8)
    wide, tail = row_reductions.split(OpGraph([whole], set())).ops

    def math(op, r, c):
        return float(grid_cycles(op, geometry(op, set()), GS, r, c).math)

    assert math(wide, 2, 1) + math(tail, 2, 1) == pytest.approx(math(whole, 2, 1))
    assert geometry(tail, set()).max_grid[1] == 1 and geometry(wide, set()).max_grid[1] > 1


def test_attention_matmuls_stream_every_head_through_each_core():
    # av: 16 heads of [384, 384] x [384, 64]: a grid splits a head's 12 x 2 output tiles, never the
    # heads, so at most 2 columns, and a 2x2 grid's core computes t = 16 slices of 6 x 1 tiles.
    av = attention().ops[2]
    g = geometry(av, set())
    assert g.t_in_core and g.max_grid == (12, 2)
    expected = core_cycles.matmul(core_cycles.ARCH[GS.arch], 16, 6, 1, 12, 1, DataFormat.Bfp8_b, GS.l1_bytes)
    assert float(grid_cycles(av, g, GS, 2, 2).math) == pytest.approx(float(expected))
    # A matmul with a weight is a linear layer: its rows and columns split freely.
    linear = PerfOp("fc", "Matmul", ((1, 384, 1024), (1024, 1024)), (1, 384, 1024), ("x", "w"), **BFP8)
    assert not geometry(linear, {"w"}).t_in_core
