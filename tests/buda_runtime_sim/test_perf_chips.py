"""The perf model over several chips: Ethernet between chips, chip selection, data parallel (no TVM)."""

from dataclasses import replace

import pytest

from buda_runtime_sim.perf import PlacementConfig, estimate
from buda_runtime_sim.perf.chips import (ETH_LINK_BYTES_PER_S, board_with_chips, check_chip_count,
                                         chips_needed_for_dram, wormhole_system)
from buda_runtime_sim.perf.data_parallel import data_parallel_report
from buda_runtime_sim.perf.boards import get_board
from tests.buda_runtime_sim.test_perf_placement import mlp_graph


def test_a_chip_break_charges_the_crossing_tensor_to_ethernet():
    graph = mlp_graph(layers=2, width=512, rows=256)
    one = estimate(graph, PlacementConfig("wh_n300", num_chips=1), microbatch=64)
    two = estimate(graph, PlacementConfig("wh_n300", chip_breaks="mm1"), microbatch=64)
    assert not one.ethernet and one.board.chips == 1
    [crossing] = two.ethernet
    assert (crossing.producer, crossing.consumer, crossing.src_chip, crossing.dst_chip) == ("relu0", "mm1", 0, 1)
    assert crossing.bytes == 256 * 512 * 2           # relu0's output, Float16_b tiles
    epoch = two.epochs[0]
    assert epoch.ethernet_cycles == pytest.approx(crossing.bytes / ETH_LINK_BYTES_PER_S * 1e9)
    assert epoch.stage_cycles >= epoch.ethernet_cycles
    assert {(c.epoch, c.chip) for c in two.chip_epochs} == {(0, 0), (0, 1)}
    assert two.chip_weight_bytes == {0: 512 * 512 * 2, 1: 512 * 512 * 2}   # each matmul's weights in its chip's DRAM
    text = two.summary()
    assert "chip 0->1 relu0 -> mm1" in text and "ethernet: 1 chip-to-chip transfer(s)" in text
    assert two.to_dict()["ethernet"][0]["bytes"] == crossing.bytes


def test_ethernet_can_be_the_slowest_stage():
    """A cheap op pair moving a big tensor across chips runs at link speed, not op speed."""
    graph = mlp_graph(layers=2, width=2048, rows=2048)
    report = estimate(graph, PlacementConfig("wh_n300", chip_breaks="mm1"), microbatch=4096)
    epoch = report.epochs[0]
    assert epoch.ethernet_cycles > 0
    assert epoch.stage_cycles == max(epoch.slowest_op_cycles, epoch.dram_cycles, epoch.ethernet_cycles)


def test_chip_counts_are_checked_against_the_board():
    with pytest.raises(ValueError, match="3 chips requested but wh_n300 has 2"):
        check_chip_count(get_board("wh_n300"), 3)
    with pytest.raises(ValueError, match="Grayskull chips have no Ethernet"):
        check_chip_count(replace(get_board("gs_e150"), chips=2), 2)
    assert board_with_chips(get_board("wh_n300"), 1).dram_bytes_per_s == get_board("wh_n300").dram_bytes_per_s / 2


def test_a_chip_break_naming_no_op_is_an_error():
    with pytest.raises(ValueError, match=r"set_chip_break names no op of model 'mlp': \['mm9'\]"):
        estimate(mlp_graph(layers=2), PlacementConfig("wh_n300", chip_breaks="mm9"))


def test_data_parallel_doubles_throughput_less_the_split():
    graph = mlp_graph(layers=4, width=1024, rows=256)
    per_chip = estimate(graph, PlacementConfig("wh_n300", num_chips=1), microbatch=512)
    one_chip = estimate(graph, PlacementConfig("wh_n300", num_chips=1), microbatch=1024)
    report = data_parallel_report(per_chip, one_chip, 2)
    assert 1.5 < report.speedup < 2.0
    assert report.samples_per_second == pytest.approx(1024 / (report.device_seconds + report.pcie_seconds
                                                              + report.ethernet_seconds))
    assert "data parallel over 2 chips" in report.summary()


def test_more_chips_hold_what_one_chip_dram_cannot():
    assert chips_needed_for_dram(7e9 * 2) == 2           # 7B parameters in 16-bit: 14 GB over 12 GiB chips
    assert wormhole_system(32).cores == 32 * 64


def test_docs_scaling_states_the_figures_the_code_uses(capsys):
    """docs/scaling.md: its DRAM table is benchmarks/scaling.py's, its Ethernet figures are perf.chips'."""
    import sys
    from pathlib import Path

    from buda_runtime_sim.perf import chips

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "scaling.md").read_text()
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        import scaling
    finally:
        sys.path.remove(str(root / "benchmarks"))
    scaling.print_dram_table()
    for line in capsys.readouterr().out.splitlines()[2:]:
        billions, bfp8, bfp8_chips, fp16, fp16_chips = line.split()
        assert f"| {billions} | {bfp8} GB | {bfp8_chips} | {fp16} GB | {fp16_chips} |" in doc
    assert chips.ETH_PORTS_PER_NEIGHBOUR == 4 and chips.ETH_PORT_BITS_PER_S == 100e9 and chips.ETH_EFFICIENCY == 0.85
    assert f"({chips.ETH_LINK_BYTES_PER_S / 1e9:.1f} GB/s" in doc and "4 x 100 Gb/s at 85 %" in doc
    assert f"{chips.ETH_HOP_LATENCY_S * 1e6:.0f} us per hop" in doc
