"""Data movement and L1 capacity in the perf model, by hand (PyBuda's balancer constants, no TVM)."""

import numpy as np
import pytest

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.perf import OpGraph, PerfOp, PlacementConfig, estimate, get_board
from buda_runtime_sim.perf import data_movement as DM
from buda_runtime_sim.perf.costs import geometry, grid_cycles

WH, GS = get_board("wh_n150"), get_board("gs_e150")
FP16 = 2048          # bytes of a Float16_b tile


def test_dram_bandwidth_per_core_follows_pybudas_fork_divider():
    # Wormhole_B0: 20.4 B/cycle per channel, 6 channels x 3 sub-channels / 1.5 = 12 cores before
    # they start sharing; never more than half a channel per core.
    assert DM.dram_core_bytes_per_cycle(WH, 1) == pytest.approx(10.2)
    assert DM.dram_core_bytes_per_cycle(WH, 12) == pytest.approx(10.2)
    assert DM.dram_core_bytes_per_cycle(WH, 64) == pytest.approx(20.4 / 6)
    # Grayskull: 118 GB/s over 8 channels at 92 %, 1.2 GHz; 8 x 1 / 1.5 cores per round.
    channel = 118e9 / 8 * 0.92 / 1.2e9
    assert DM.dram_channel_bytes_per_cycle(GS) == pytest.approx(channel)
    assert DM.dram_core_bytes_per_cycle(GS, 32) == pytest.approx(channel / 6)
    assert DM.dram_bytes_per_cycle(WH) == pytest.approx(6 * 20.4)
    assert DM.pcie_core_bytes_per_cycle(WH, 4) == pytest.approx(6.0)


def test_an_epochs_dram_bound_time_is_bytes_over_bandwidth():
    # One cheap op (a datacopy of a 64x4096 Float16_b tensor, 256 tiles) pinned to one core: it
    # reads its input from the input queue and writes its output to the output queue, 512 KiB
    # each way per run, at one core's DRAM rate (20.4 / 2 B a cycle), slower than the copy.
    op = PerfOp("copy", "Nop", ((64, 4096),), (64, 4096), ("x",))
    report = estimate(OpGraph([op], set()), PlacementConfig("wh_n150", op_sizes={"copy": (1, 1)}), microbatch=8)
    epoch = report.epochs[0]
    assert epoch.stage_cycles == pytest.approx(256 * FP16 / 10.2)
    assert epoch.stage_cycles > 1.4 * report.op("copy").cycles       # the copy itself: ~34.5k cycles
    # On 4 cores each moves a quarter, and 4 cores still get 10.2 B a cycle each.
    wide = estimate(OpGraph([op], set()), PlacementConfig("wh_n150", op_sizes={"copy": (1, 4)}), microbatch=8)
    assert wide.epochs[0].stage_cycles == pytest.approx(64 * FP16 / 10.2)


def test_noc_data_is_the_slowest_operand_at_16_bytes_a_cycle():
    # add of two 2x8-tile tensors on one core: each operand and the output are 16 tiles.
    op = PerfOp("add", "Add", ((64, 256), (64, 256)), (64, 256), ("a", "b"))
    table = grid_cycles(op, geometry(op, set()), WH, 1, 1)
    assert float(table.data) == 16 * FP16 / 16


def test_streamed_weights_come_from_dram_at_the_per_core_rate():
    # [32,1024] x [1024,1024] with weights forced to DRAM (default_dram_parameters): on a 2x4 grid each
    # core reads its column's share, 32 x 8 tiles, at 20.4 / max(2, ceil(8 / 12)) B a cycle.
    op = PerfOp("mm", "Matmul", ((32, 1024), (1024, 1024)), (32, 1024), ("x", "w"), data_format=DataFormat.Float16_b,
                math_fidelity=MathFidelity.LoFi)
    table = grid_cycles(op, geometry(op, {"w"}), WH, 2, 4, weights_in_dram=True)
    assert not bool(table.weights_resident)
    assert float(table.data) == pytest.approx(32 * 8 * FP16 / 10.2)
    # In the epoch all 8 cores read that share: the board's DRAM traffic counts 2 copies of the weight.
    report = estimate(OpGraph([op], {"w"}), PlacementConfig("wh_n150", op_sizes={"mm": (2, 4)},
                                                             default_dram_parameters=True), microbatch=2)
    weight_and_io = 2 * 32 * 32 * FP16 + (1 + 1) * 32 * FP16
    assert report.epochs[0].dram_cycles == pytest.approx(weight_and_io / DM.dram_bytes_per_cycle(WH))


def test_weights_stay_resident_only_when_they_fit_beside_the_buffers():
    # A 1024 x N Float16_b weight on one core: its share plus the double-buffered output block and
    # one-tile-deep input blocks must fit L1 usable (L1 less 260 KiB + 128 B of firmware and overlay).
    usable = DM.l1_usable_bytes(WH)
    assert usable == 1464 * 1024 - (204 + 56) * 1024 - 128

    def resident(n):
        op = PerfOp("mm", "Matmul", ((32, 1024), (1024, n)), (32, n), ("x", "w"))
        return bool(grid_cycles(op, geometry(op, {"w"}), WH, 1, 1).weights_resident)

    def footprint(n):      # weights 32 x n/32 tiles, buffers 2 x (output 1 x n/32 + input 1 row tile)
        tiles = n // 32
        return (32 * tiles + 2 * (tiles + 1)) * FP16

    fitting = max(n for n in range(32, 4096, 32) if footprint(n) <= usable)
    assert resident(fitting) and not resident(fitting + 32)


def test_grids_whose_buffers_overflow_l1_are_not_chosen():
    # A datacopy of 64 x 64 Float16_b tiles: on one core its double-buffered output alone is 16 MiB.
    op = PerfOp("copy", "Nop", ((2048, 2048),), (2048, 2048), ("x",))
    table = grid_cycles(op, geometry(op, set()), GS, np.arange(1, 11)[:, None], np.arange(1, 13)[None, :])
    assert not table.fits[0, 0] and table.fits[-1, -1]
    report = estimate(OpGraph([op], set()), PlacementConfig("gs_e150"), microbatch=4)
    rows, cols = report.op("copy").grid
    assert table.fits[rows - 1, cols - 1]
    # override_op_size still wins: the user's grid is kept even if it overflows.
    pinned = estimate(OpGraph([op], set()), PlacementConfig("gs_e150", op_sizes={"copy": (1, 1)}), microbatch=4)
    assert pinned.op("copy").grid == (1, 1)


def test_an_epoch_switch_loads_every_cores_binaries_and_a_long_program_reloads_them_from_the_host():
    # 120 KiB a core (three TRISC kernels and the overlay blob) from DRAM; past 32 epochs the
    # device's binary cache thrashes and every switch also brings them over PCIe at 24 B a cycle.
    assert DM.epoch_switch_cycles(WH, 10, 32) == pytest.approx(10 * 120 * 1024 / 122.4)
    assert DM.epoch_switch_cycles(WH, 10, 33) == pytest.approx(10 * 120 * 1024 * (1 / 122.4 + 1 / 24))
    layers = [PerfOp(f"mm{i}", "Matmul", ((32, 256), (256, 256)), (32, 256), (f"x{i}", f"w{i}"), output=f"x{i + 1}")
              for i in range(40)]
    graph = OpGraph(layers, {f"w{i}" for i in range(40)})
    epochs = estimate(graph, PlacementConfig("wh_n150", epoch_breaks=frozenset(f"mm{i}" for i in range(40))),
                      microbatch=2).epochs
    assert len(epochs) == 40
    assert epochs[3].switch_cycles == pytest.approx(DM.epoch_switch_cycles(WH, epochs[3].cores, 40))
