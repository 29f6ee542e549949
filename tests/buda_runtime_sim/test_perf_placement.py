"""Boards, balancer, placer and epoch costs on hand-built graphs (no TVM)."""

import json

import pytest

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.perf import BOARDS, OpGraph, PerfOp, PlacementConfig, estimate, get_board
from buda_runtime_sim.perf import core_cycles
from buda_runtime_sim.perf import op_model as M


def mlp_graph(layers=4, width=1024, rows=256, df=DataFormat.Float16_b, fidelity=MathFidelity.LoFi) -> OpGraph:
    """x -> (matmul with weight w_i -> gelu) x layers (ops named relu{i}; gelu does not fuse into the matmul)."""
    ops, value = [], "x"
    for i in range(layers):
        ops.append(PerfOp(f"mm{i}", "Matmul", ((rows, width), (width, width)), (rows, width), (value, f"w{i}"),
                          data_format=df, math_fidelity=fidelity))
        ops.append(PerfOp(f"relu{i}", "Gelu", ((rows, width),), (rows, width), (f"mm{i}",),
                          data_format=df, math_fidelity=fidelity))
        value = f"relu{i}"
    return OpGraph(ops, {f"w{i}" for i in range(layers)}, name="mlp")


# ---- boards ------------------------------------------------------------------------------------
def test_board_core_grids_match_the_published_counts():
    assert {name: b.cores for name, b in BOARDS.items()} == {"gs_e75": 96, "gs_e150": 120, "wh_n150": 72,
                                                              "wh_n300": 128}
    assert get_board("gs_e150").grid_shape == (10, 12)


def test_harvested_rows_shrink_the_grid():
    board = get_board("gs_e150", harvested_rows=[1, 11])
    assert board.grid_shape == (8, 12) and board.cores == 96
    report = estimate(mlp_graph(), PlacementConfig("gs_e150", harvested_rows=(1, 11)))
    assert report.board.grid_rows == 8
    assert all(o.row + o.grid[0] <= 8 for o in report.ops if o.grid)


def test_wormhole_ops_are_placed_on_an_8x8_grid_of_the_9x8_workers():
    board = get_board("wh_n150")
    assert board.grid_shape == (9, 8) and board.op_grid_rows == 8 and board.op_cores == 64
    assert get_board("gs_e150").op_cores == 120 and get_board("wh_n300").op_cores == 128
    report = estimate(mlp_graph(layers=8, rows=1024), PlacementConfig("wh_n150"))
    assert all(o.row + o.grid[0] <= 8 for o in report.ops if o.grid)
    with pytest.raises(ValueError, match="8x8"):
        estimate(mlp_graph(), PlacementConfig("wh_n150", op_sizes={"mm0": (9, 1)}))


@pytest.mark.parametrize("rows", [[0], [6], [12], [3, 3], list(range(1, 6)) + list(range(7, 12))])
def test_only_rows_1_to_5_and_7_to_11_are_harvestable(rows):
    with pytest.raises(ValueError, match="harvest"):
        get_board("wh_n150", harvested_rows=rows)


def test_unknown_board_is_a_clear_error():
    with pytest.raises(ValueError, match="device_config"):
        get_board("gs_e999")


# ---- exact epoch arithmetic ----------------------------------------------------------------------
def test_one_pinned_matmul_epoch_by_hand():
    # One matmul [64,128]x[128,96] pinned to 1x1 on wh_n150, microbatch 4 (4 runs of 1 sample):
    #   op: the calibrated core cycles of its 2 x 3 tile block with 4 inner tiles (core_cycles.matmul)
    #       or reading x's 8 tiles over the NoC at 16 B a cycle, whichever is slower; in the epoch,
    #       its DRAM queues if slower still: it reads x from the input queue and writes its 6
    #       output tiles to the output queue, one core at 20.4 / 2 B a cycle (data_movement.py)
    #   prologue: weight 12 tiles * 2048 B = 24576 B / (6 channels * 20.4 B a cycle)
    #   switch: the core loads the epoch's binaries, 120 KiB, from DRAM at 6 x 20.4 B a cycle
    #   epoch = switch + prologue + fill (one op) + 3 more runs * op
    op = PerfOp("mm", "Matmul", ((64, 128), (128, 96)), (64, 96), ("x", "w"), math_fidelity=MathFidelity.LoFi)
    report = estimate(OpGraph([op], {"w"}), PlacementConfig("wh_n150", op_sizes={"mm": (1, 1)}), microbatch=4)
    op_cycles = float(core_cycles.matmul(M.WH, 1, 2, 3, 4, 1, DataFormat.Float16_b, get_board("wh_n150").l1_bytes))
    op_cycles = max(op_cycles, 8 * 2048 / 16)
    stage = max(op_cycles, 8 * 2048 / 10.2)
    expected = 120 * 1024 / 122.4 + 24576 / 122.4 + 4 * stage
    assert report.cycles == pytest.approx(expected)
    assert report.samples_per_second == pytest.approx(4 / (expected * 1e-9))
    assert report.op("mm").cycles == pytest.approx(op_cycles) and report.op("mm").grid == (1, 1)


def test_transfers_cross_pcie_at_the_measured_rates():
    # h2d 1 tile of Float16_b (2048 B) at 24 GB/s, d2h the same at 11 GB/s, once per run, 2 runs.
    op = PerfOp("relu", "Relu", ((32, 32),), (32, 32), ("x",))
    from buda_runtime_sim.perf import HostTransfer

    graph = OpGraph([op], set(), [HostTransfer("x", "h2d", (32, 32), DataFormat.Float16_b),
                                  HostTransfer("relu", "d2h", (32, 32), DataFormat.Float16_b)])
    report = estimate(graph, microbatch=2)
    assert report.transfer_seconds == pytest.approx(2 * 2048 / 24e9 + 2 * 2048 / 11e9)


# ---- balancer and placer -------------------------------------------------------------------------
def test_placements_stay_on_the_grid_and_never_overlap():
    report = estimate(mlp_graph(layers=12), PlacementConfig("gs_e150"), microbatch=64)
    rows, cols = report.board.grid_shape
    taken = {}
    for o in report.ops:
        assert o.grid is not None
        assert 0 <= o.row and o.row + o.grid[0] <= rows and 0 <= o.col and o.col + o.grid[1] <= cols
        for r in range(o.row, o.row + o.grid[0]):
            for c in range(o.col, o.col + o.grid[1]):
                assert (o.epoch, o.chip, r, c) not in taken, f"{o.name} overlaps {taken[(o.epoch, o.chip, r, c)]}"
                taken[(o.epoch, o.chip, r, c)] = o.name


def test_override_op_size_is_honoured():
    report = estimate(mlp_graph(), PlacementConfig(op_sizes={"mm1": (3, 2)}), microbatch=8)
    assert report.op("mm1").grid == (3, 2)
    with pytest.raises(ValueError, match="does not fit"):
        estimate(mlp_graph(), PlacementConfig("wh_n150", op_sizes={"mm1": (10, 1)}))


def test_set_epoch_break_starts_a_new_epoch():
    base = estimate(mlp_graph(layers=2, width=256, rows=64), microbatch=8)
    assert len(base.epochs) == 1
    broken = estimate(mlp_graph(layers=2, width=256, rows=64), PlacementConfig(epoch_breaks=["mm1"]), microbatch=8)
    assert len(broken.epochs) == 2
    assert broken.op("relu0").epoch == 0 and broken.op("mm1").epoch == 1


def test_place_on_one_row_gives_single_row_grids():
    report = estimate(mlp_graph(), PlacementConfig(place_on_one_row=True), microbatch=8)
    assert all(o.grid[0] == 1 for o in report.ops if o.grid)


def test_chip_break_moves_an_op_to_the_next_chip():
    report = estimate(mlp_graph(layers=2, width=256, rows=64), PlacementConfig("wh_n300", chip_breaks="mm1"),
                      microbatch=8)
    assert report.op("mm0").chip == 0 and report.op("mm1").chip == 1 and len(report.epochs) == 1


def test_bigger_grid_never_slows_a_single_matmul_model():
    graph = OpGraph([PerfOp("mm", "Matmul", ((512, 1024), (1024, 1024)), (512, 1024), ("x", "w"))], {"w"})
    small = estimate(graph, PlacementConfig("gs_e150", harvested_rows=(1, 2, 3, 11)), microbatch=16)
    big = estimate(graph, PlacementConfig("gs_e150"), microbatch=16)
    assert big.samples_per_second >= small.samples_per_second


def test_weights_only_ops_fold_and_transposes_take_no_cores():
    ops = [PerfOp("t", "Transpose", ((96, 128),), (128, 96), ("w",)),
           PerfOp("mm", "Matmul", ((64, 128), (128, 96)), (64, 96), ("x", "t")),
           PerfOp("r", "Reshape", ((64, 96),), (1, 64, 96), ("mm",)),
           PerfOp("relu", "Gelu", ((1, 64, 96),), (1, 64, 96), ("r",))]
    report = estimate(OpGraph(ops, {"w"}), microbatch=4)
    assert report.op("t").kind == "folded" and report.op("r").kind == "tm"
    assert report.op("t").grid is None and report.op("r").grid is None
    assert report.op("mm").grid is not None and report.op("relu").grid is not None


def test_more_epochs_from_a_full_grid():
    # 24 big layers cannot all sit on one wh_n150 grid at a useful size
    report = estimate(mlp_graph(layers=24, width=2048, rows=512), microbatch=64)
    assert len(report.epochs) > 1
    assert sum(e.ops for e in report.epochs) == 48


def test_report_to_json_and_text(tmp_path):
    report = estimate(mlp_graph(), microbatch=8)
    data = json.loads(report.to_json(tmp_path / "r.json").read_text())
    assert data["samples_per_second"] == pytest.approx(report.samples_per_second)
    assert data["board"]["grid"] == [9, 8] and len(data["epochs"]) == len(report.epochs)
    assert {"name", "op_type", "grid", "tiles", "data_format", "math_fidelity", "cycles"} <= set(data["ops"][0])
    text = str(report)
    assert "samples/s" in text and "mm3" in text and "Float16_b" in text


def test_ops_without_static_shapes_are_a_clear_error():
    with pytest.raises(ValueError, match="static shapes"):
        estimate(OpGraph([PerfOp("mm", "Matmul", (), (), ("x", "w"))], {"w"}))


def test_a_scalar_elementwise_op_is_priced_as_one_tile():
    """Rank-0 shapes are static: a scalar add (DiffLlama's lambda) costs one tile, it is no error."""
    scalar = estimate(OpGraph([PerfOp("add", "Add", ((), ()), (), ("x", "y"))], set()), microbatch=1)
    tile = estimate(OpGraph([PerfOp("add", "Add", ((32, 32), (32, 32)), (32, 32), ("x", "y"))], set()), microbatch=1)
    assert scalar.samples_per_second == pytest.approx(tile.samples_per_second, rel=0.01)
    assert scalar.samples_per_second > 0


def test_the_perf_model_imports_neither_tvm_nor_torch_nor_matplotlib():
    import subprocess
    import sys

    code = ("import sys, buda_runtime_sim.perf; "
            "bad = [m for m in ('tvm', 'torch', 'matplotlib') if m in sys.modules]; assert not bad, bad")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_relu_and_bias_fuse_into_the_matmul_before_them():
    # PyBuda's netlists: no relu op (the packer clamps) and the bias is the matmul's third operand.
    ops = [PerfOp("mm", "Matmul", ((64, 128), (128, 96)), (64, 96), ("x", "w")),
           PerfOp("bias", "Add", ((64, 96), (96,)), (64, 96), ("mm", "b")),
           PerfOp("act", "Relu", ((64, 96),), (64, 96), ("bias",)),
           PerfOp("out", "Gelu", ((64, 96),), (64, 96), ("act",))]
    report = estimate(OpGraph(ops, {"w", "b"}))
    assert [report.op(n).kind for n in ("bias", "act")] == ["fused", "fused"]
    assert report.op("bias").grid is None and report.op("out").grid is not None
    # A relu whose input also feeds another op keeps its own cores.
    forked = ops[:3] + [PerfOp("out", "Add", ((64, 96), (64, 96)), (64, 96), ("act", "bias"))]
    assert estimate(OpGraph(forked, {"w", "b"})).op("act").kind == "sfpu"


def test_a_clip_from_zero_fuses_as_relu6_does():
    # torch.export writes ReLU6 (hardtanh) as a clip at [0, 6]; MobileNet netlists hold no clip op.
    def graph(act):
        return OpGraph([PerfOp("mm", "Matmul", ((64, 128), (128, 96)), (64, 96), ("x", "w")), act,
                        PerfOp("out", "Gelu", ((64, 96),), (64, 96), ("act",))], {"w"})

    relu6 = estimate(graph(PerfOp("act", "Relu6", ((64, 96),), (64, 96), ("mm",))))
    clip = estimate(graph(PerfOp("act", "Clip", ((64, 96),), (64, 96), ("mm",), attrs={"min": 0.0, "max": 6.0})))
    assert clip.op("act").kind == relu6.op("act").kind == "fused"
    assert clip.samples_per_second == relu6.samples_per_second
    shifted = PerfOp("act", "Clip", ((64, 96),), (64, 96), ("mm",), attrs={"min": -1.0, "max": 6.0})
    assert estimate(graph(shifted)).op("act").kind != "fused"           # not a relu: the op keeps its cores


def test_idle_cores_of_an_epoch_go_to_its_slowest_op():
    # A plan with every op on one core leaves most of the epoch idle; filling gives the slowest
    # ops bigger grids while the epoch still fits the chip, and never costs more.
    from buda_runtime_sim.perf.balancer import Plan, _fill_spare_cores, _Frontier
    from buda_runtime_sim.perf.epochs import epoch_costs
    from buda_runtime_sim.perf.placer import place
    from buda_runtime_sim.perf.prepare import prepare

    config, board = PlacementConfig("wh_n150"), get_board("wh_n150")
    prepared = prepare(mlp_graph(layers=2), board, config)
    frontiers = [_Frontier.of(op) for op in prepared.placed]
    ones = place([(op.name, (1, 1), 0) for op in prepared.placed], board)
    plan = Plan(ones, epoch_costs(prepared, ones, 8), 0.0)
    filled = _fill_spare_cores(prepared, config, 8, frontiers, plan)
    assert len(filled.epochs) == 1 and filled.total_cycles < plan.total_cycles / 4
    assert 4 < sum(pl.cores for pl in filled.placements) <= board.cores


def test_grids_divide_the_ops_tiles_as_pybudas_legalizer_requires():
    # A [224, 768] x [768, 3072] matmul: 7 row tiles and 96 column tiles, so only 1 or 7 rows of
    # cores and a column count dividing 96 (tt-buda legalizer: FactorizedShape of the op's tiles).
    op = PerfOp("fc", "Matmul", ((224, 768), (768, 3072)), (224, 3072), ("x", "w"), data_format=DataFormat.Bfp8_b,
                math_fidelity=MathFidelity.LoFi)
    report = estimate(OpGraph([op], {"w"}), PlacementConfig("gs_e150"), microbatch=16)
    rows, cols = report.op("fc").grid
    assert rows in (1, 7) and 96 % cols == 0
    from buda_runtime_sim.perf.prepare import prepare

    allowed = prepare(OpGraph([op], {"w"}), get_board("gs_e150"), PlacementConfig("gs_e150")).placed[0].allowed
    assert allowed[6, 7] and not allowed[1, 7] and not allowed[6, 6]      # 7x8 legal; 2x8, 7x7 not


def test_dimensions_with_large_prime_factors_are_padded_first():
    # PyBuda's padding pass raises every prime factor above 10 until none is left: GPT-2's
    # 50257-wide vocabulary (1571 tiles, a prime) would otherwise only take one column of cores.
    from buda_runtime_sim.perf.prepare import padded_tiles

    assert [padded_tiles(n) for n in (7, 98, 25, 11, 13, 1571)] == [7, 98, 25, 12, 14, 1728]
    head = PerfOp("lm_head", "Matmul", ((32, 768), (768, 50257)), (32, 50257), ("x", "w"),
                  data_format=DataFormat.Bfp8_b, math_fidelity=MathFidelity.LoFi)
    report = estimate(OpGraph([head], {"w"}), PlacementConfig("wh_n150"), microbatch=1)
    assert report.op("lm_head").grid[1] == 8            # 1728 tiles split over all 8 columns
