"""Per-op cycle model: hand-computed cases and monotonic sanity (no TVM)."""

import numpy as np
import pytest

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.perf import PerfOp, get_board
from buda_runtime_sim.perf.costs import geometry, grid_cycles, peak_tflops
from buda_runtime_sim.perf.ops import HostTransfer, tensor_bytes

WH, GS = get_board("wh_n150"), get_board("gs_e150")


def matmul(m, k, n, df=DataFormat.Float16_b, fidelity=MathFidelity.LoFi, weight=True):
    return PerfOp("mm", "Matmul", ((m, k), (k, n)), (m, n), ("x", "w" if weight else "y"),
                  data_format=df, math_fidelity=fidelity)


def cycles(op, board, r, c, weights=("w",)):
    table = grid_cycles(op, geometry(op, set(weights)), board, r, c)
    return float(table.cycles), float(table.math), float(table.data)


def test_matmul_on_one_wormhole_core_is_bound_by_reading_its_activations():
    # [64,128] x [128,96]: rt=2, kt=4, ct=3 tiles. Weight (12 tiles * 2048 B) stays in L1.
    # math = 2*3 output tiles * 4 inner tiles * 16 cycles * 1 phase (LoFi) = 384
    # read = A 2*4 tiles * 2048 B / 32 B per cycle = 512;  write = 6 tiles * 2048 / 32 = 384
    assert cycles(matmul(64, 128, 96), WH, 1, 1) == (512, 384, 512)


def test_matmul_bfp8_hifi2_on_a_2x2_wormhole_grid_is_math_bound():
    # [128,256] x [256,256]: rt=4, kt=8, ct=8; per core 2 row tiles x 4 column tiles.
    # math = 2*4 * 8 * 16 * 2 phases = 2048;  read = A 2*8 tiles * 1088 B / 32 = 544;  write = 8*1088/32 = 272
    op = matmul(128, 256, 256, DataFormat.Bfp8_b, MathFidelity.HiFi2)
    assert cycles(op, WH, 2, 2) == (2048, 2048, 544)


def test_grayskull_matmul_pays_32_cycles_per_tile_phase():
    # [32,128] x [128,32] HiFi4: 1 tile x 4 inner tiles * 32 cycles * 4 phases = 512
    op = matmul(32, 128, 32, fidelity=MathFidelity.HiFi4)
    assert cycles(op, GS, 1, 1)[1] == 512


def test_activation_times_activation_matmul_streams_both_operands():
    # [64,128] x [128,96] with no weights: read A 8 tiles + B 12 tiles = 20 * 2048 / 32 = 1280
    assert cycles(matmul(64, 128, 96, weight=False), WH, 1, 1, weights=()) == (1280, 384, 1280)


def test_add_of_two_activations_is_bound_by_data_movement():
    # [64,64] = 4 tiles: math 4 * 8 = 32; read 2 operands * 4 tiles * 2048 / 32 = 512
    op = PerfOp("add", "Add", ((64, 64), (64, 64)), (64, 64), ("a", "b"))
    assert cycles(op, WH, 1, 1, weights=()) == (512, 32, 512)
    bfp8 = PerfOp("add", "Add", ((64, 64), (64, 64)), (64, 64), ("a", "b"), data_format=DataFormat.Bfp8_b)
    assert cycles(bfp8, WH, 1, 1, weights=()) == (272, 32, 272)   # 8 tiles * 1088 / 32


def test_softmax_is_the_sum_of_its_steps():
    # [32,64] = 2 tiles in one tile row, LoFi. Per tile: max and sum reductions 2*4, subtract 8,
    # exp 1771, multiply 8*1 = 1795; per tile row one reciprocal: 32 passes * 24 = 768.
    op = PerfOp("sm", "nn.Softmax", ((32, 64),), (32, 64), ("a",), math_fidelity=MathFidelity.LoFi)
    assert cycles(op, WH, 1, 1, weights=())[1] == 2 * 1795 + 768


@pytest.mark.parametrize("shape", [(64, 128, 96), (384, 1024, 4096), (200, 300, 70), (32, 4096, 32)])
@pytest.mark.parametrize("board", [WH, GS])
def test_a_bigger_grid_never_makes_a_matmul_slower(shape, board):
    op = matmul(*shape)
    r = np.arange(1, board.grid_rows + 1)[:, None]
    c = np.arange(1, board.grid_cols + 1)[None, :]
    table = grid_cycles(op, geometry(op, {"w"}), board, r, c).cycles
    assert (np.diff(table, axis=0) <= 0).all() and (np.diff(table, axis=1) <= 0).all()


@pytest.mark.parametrize("grid", [(1, 1), (2, 3), (8, 8)])
def test_lofi_is_never_slower_than_hifi4(grid):
    for m, k, n in [(64, 128, 96), (1024, 1024, 1024)]:
        lofi = cycles(matmul(m, k, n, fidelity=MathFidelity.LoFi), WH, *grid)[0]
        hifi4 = cycles(matmul(m, k, n, fidelity=MathFidelity.HiFi4), WH, *grid)[0]
        assert lofi <= hifi4
    big_lofi = cycles(matmul(1024, 1024, 1024, fidelity=MathFidelity.LoFi), WH, *grid)[0]
    assert big_lofi * 4 == cycles(matmul(1024, 1024, 1024, fidelity=MathFidelity.HiFi4), WH, *grid)[0]


def test_bfp8_moves_fewer_bytes_than_float16():
    assert tensor_bytes((128, 256), DataFormat.Bfp8_b) == 32 * 1088 < tensor_bytes((128, 256), DataFormat.Float16) == 32 * 2048
    assert HostTransfer("x", "h2d", (3, 224, 224), DataFormat.Bfp8_b).bytes < \
        HostTransfer("x", "h2d", (3, 224, 224), DataFormat.Float16).bytes
    data = [cycles(matmul(512, 512, 512, df), WH, 1, 1)[2] for df in (DataFormat.Bfp8_b, DataFormat.Float16)]
    assert data[0] < data[1]


def test_conv_is_a_matmul_on_the_im2col_matrix():
    # 3x3 conv, 64 -> 128 channels, 56x56 output: M = 3136 rows (98 tiles), K = 576 (18 tiles), N = 128 (4 tiles)
    op = PerfOp("conv", "Conv2d", ((1, 64, 56, 56), (128, 64, 3, 3)), (1, 128, 56, 56), ("x", "w"))
    g = geometry(op, {"w"})
    assert (g.kind, g.z, g.rt, g.kt, g.ct, g.macs) == ("conv", 1, 98, 18, 4, 3136 * 576 * 128)
    depthwise = PerfOp("dw", "Conv2d", ((1, 64, 56, 56), (64, 1, 3, 3)), (1, 64, 56, 56), ("x", "w"))
    assert geometry(depthwise, {"w"}).kind == "depthwise"


def test_model_peak_matches_the_published_wormhole_figures():
    # 72 cores * 2048 MACs per cycle * 2 FLOPs * 1 GHz = 295 TFLOPS at LoFi; published BFP8 148 (HiFi2), FP16 74 (HiFi4)
    assert round(peak_tflops(WH, 2)) == 147 and round(peak_tflops(WH, 4)) == 74


def test_unstable_softmax_skips_the_max_and_subtract():
    # enable_stable_softmax=False drops one reduction (4) and one subtract (8) per tile: 2 tiles -> 24 cycles
    stable = PerfOp("sm", "Softmax", ((32, 64),), (32, 64), ("a",), attrs={"stable": True})
    unstable = PerfOp("sm", "Softmax", ((32, 64),), (32, 64), ("a",), attrs={"stable": False})
    assert cycles(stable, WH, 1, 1, weights=())[1] - cycles(unstable, WH, 1, 1, weights=())[1] == 24


def test_transposed_conv_reads_its_weight_layout():
    # ConvTranspose 64 -> 32 channels, 2x2 kernel, 14x14 -> 28x28: weight [Cin=64, Cout=32, 2, 2]
    op = PerfOp("up", "Conv2dTranspose", ((1, 64, 14, 14), (64, 32, 2, 2)), (1, 32, 28, 28), ("x", "w"))
    g = geometry(op, {"w"})
    assert (g.kind, g.rt, g.kt, g.ct) == ("conv", 25, 8, 1)   # 784 rows, K = 64*4 = 256, N = 32
