"""Per-op cycle model: measured silicon blocks, hand-computed data movement, monotonic sanity (no TVM)."""

import numpy as np
import pytest

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.perf import PerfOp, get_board
from buda_runtime_sim.perf import core_cycles
from buda_runtime_sim.perf import op_model as M
from buda_runtime_sim.perf.costs import geometry, grid_cycles, peak_tflops
from buda_runtime_sim.perf.ops import HostTransfer, tensor_bytes

WH, GS = get_board("wh_n150"), get_board("gs_e150")


def matmul(m, k, n, df=DataFormat.Float16_b, fidelity=MathFidelity.LoFi, weight=True):
    return PerfOp("mm", "Matmul", ((m, k), (k, n)), (m, n), ("x", "w" if weight else "y"),
                  data_format=df, math_fidelity=fidelity)


def cycles(op, board, r, c, weights=("w",)):
    table = grid_cycles(op, geometry(op, set(weights)), board, r, c)
    return float(table.cycles), float(table.math), float(table.data)


def test_a_measured_wormhole_matmul_block_costs_what_silicon_measured():
    # buda_runtime_sim/perf/perf_data matmul-bfp8 line 243: mblock 4x4, ublock 2x4, m_k 1, u_kt 8 (Bfp8_b, LoFi) ran
    # 21088 cycles per input. The same core block: [256,256] x [256,512] on one core (8 x 16 output
    # tiles, 8 inner tiles). The model may pick a cheaper ublock, never a much dearer one.
    op = matmul(256, 256, 512, DataFormat.Bfp8_b, weight=False)
    total, math_cycles, data = cycles(op, WH, 1, 1, weights=())
    assert math_cycles == pytest.approx(21088, rel=0.15)
    # data: the slowest of reading A (64 tiles), B (128) and writing the output (128), 1088 B a tile
    # at PyBuda's 16 B per cycle per core (data_movement.py), well under the core's cycles
    assert data == 128 * 1088 / 16 and total == math_cycles


def test_a_measured_grayskull_matmul_block_costs_what_silicon_measured():
    # grayskull matmul-op-performance line 71: mblock 2x2, ublock 2x4, m_k 1, u_kt 16 -> 18200 cycles.
    op = matmul(128, 512, 256, DataFormat.Bfp8_b, weight=False)
    assert cycles(op, GS, 1, 1, weights=())[1] == pytest.approx(18200, rel=0.15)


def test_a_measured_add_block_costs_what_silicon_measured():
    # wormhole add Test-ID 0: mblock 4x4 of 8x1 ublocks (128 tiles, Bfp8_b): 1374109 / 128 = 10735 cycles.
    op = PerfOp("add", "Add", ((1024, 128), (1024, 128)), (1024, 128), ("a", "b"), data_format=DataFormat.Bfp8_b)
    total, math_cycles, data = cycles(op, WH, 1, 1, weights=())
    assert math_cycles == pytest.approx(10735, rel=0.15)
    assert data == 128 * 1088 / 16 and total == math_cycles    # each operand and the output: 128 tiles


def test_small_blocks_pay_per_ublock_and_per_input_overheads():
    # One 32x32 add is far dearer per tile than 128 tiles (README: 313 vs 84 cycles per tile on WH).
    small = PerfOp("add", "Add", ((32, 32), (32, 32)), (32, 32), ("a", "b"), data_format=DataFormat.Bfp8_b)
    big = PerfOp("add", "Add", ((1024, 128), (1024, 128)), (1024, 128), ("a", "b"), data_format=DataFormat.Bfp8_b)
    assert cycles(small, WH, 1, 1, weights=())[1] > 2.5 * cycles(big, WH, 1, 1, weights=())[1] / 128


def test_activation_times_activation_matmul_streams_both_operands():
    # [64,128] x [128,96] with no weights: A 8 tiles, B 12 tiles, output 6, the slowest at 16 B a cycle
    assert cycles(matmul(64, 128, 96, weight=False), WH, 1, 1, weights=())[2] == 12 * 2048 / 16
    assert cycles(matmul(64, 128, 96), WH, 1, 1)[2] == 8 * 2048 / 16     # the weight stays in L1


def test_sfpu_functions_cost_what_they_measured():
    # wormhole exp (precise) on 4 tiles: 7136 cycles per input (Test-ID 274); gelu is far cheaper.
    exp = PerfOp("e", "Exp", ((64, 64),), (64, 64), ("a",), data_format=DataFormat.Bfp8_b)
    gelu = PerfOp("g", "Gelu", ((64, 64),), (64, 64), ("a",), data_format=DataFormat.Bfp8_b)
    assert cycles(exp, WH, 1, 1, weights=())[1] == pytest.approx(7136, rel=0.05)
    assert cycles(gelu, WH, 1, 1, weights=())[1] < cycles(exp, WH, 1, 1, weights=())[1] / 4


def test_softmax_is_the_sum_of_its_steps():
    op = PerfOp("sm", "nn.Softmax", ((32, 64),), (32, 64), ("a",), math_fidelity=MathFidelity.LoFi)
    arch, df = core_cycles.ARCH[WH.arch], "fp16"
    steps = sum(core_cycles.eltwise(arch, s, 1, 1, 2, df) for s in ("exp", "reduce_c", "multiply", "reduce_c",
                                                                    "subtract"))
    assert cycles(op, WH, 1, 1, weights=())[1] == pytest.approx(steps + core_cycles.eltwise(arch, "reciprocal", 1, 1, 1, df))


def test_backward_ops_are_the_sum_of_their_steps():
    arch, df = core_cycles.ARCH[WH.arch], "fp16"
    step = {s: core_cycles.eltwise(arch, s, 1, 1, 2, df) for s in ("multiply", "reduce_c", "reduce_r", "subtract")}
    softmax_bw = PerfOp("smb", "nn.SoftmaxBw", ((32, 64), (32, 64)), (32, 64), ("y", "dy"))
    assert cycles(softmax_bw, WH, 1, 1, weights=())[1] == pytest.approx(
        2 * step["multiply"] + step["reduce_c"] + step["subtract"])

    def layernorm_bw(operand):
        op = PerfOp("lnb", "nn.LayernormBw", ((32, 64), (32, 64), (64,)), (32, 64) if operand == 0 else (64,),
                    ("dy", "x", "w"), attrs={"operand": operand})
        return cycles(op, WH, 1, 1)[1]

    assert layernorm_bw(2) == pytest.approx(step["reduce_r"])          # the bias' gradient: one sum over rows
    assert layernorm_bw(0) > layernorm_bw(1) > layernorm_bw(2)         # the input's needs the most steps
    gelu_derivative = PerfOp("gd", "GeluDerivative", ((32, 64),), (32, 64), ("a",))
    gelu = PerfOp("g", "Gelu", ((32, 64),), (32, 64), ("a",))
    assert cycles(gelu_derivative, WH, 1, 1, weights=())[1] == cycles(gelu, WH, 1, 1, weights=())[1]


@pytest.mark.parametrize("shape", [(64, 128, 96), (384, 1024, 4096), (200, 300, 70), (32, 4096, 32)])
@pytest.mark.parametrize("board", [WH, GS])
def test_a_bigger_grid_never_makes_a_matmul_slower(shape, board):
    op = matmul(*shape)
    r = np.arange(1, board.grid_rows + 1)[:, None]
    c = np.arange(1, board.grid_cols + 1)[None, :]
    table = grid_cycles(op, geometry(op, {"w"}), board, r, c)
    assert (np.diff(table.math, axis=0) <= 0).all() and (np.diff(table.math, axis=1) <= 0).all()
    # With the weights resident, the total too. (Streamed weights are not monotonic: more cores
    # reading DRAM at once each get less of it, data_movement.dram_core_bytes_per_cycle.)
    resident = np.where(table.weights_resident, table.cycles, np.nan)
    assert not (np.diff(resident, axis=0) > 0).any() and not (np.diff(resident, axis=1) > 0).any()


@pytest.mark.parametrize("grid", [(1, 1), (2, 3), (8, 8)])
def test_lofi_is_never_slower_than_hifi4(grid):
    for m, k, n in [(64, 128, 96), (1024, 1024, 1024)]:
        lofi = cycles(matmul(m, k, n, fidelity=MathFidelity.LoFi), WH, *grid)[0]
        hifi4 = cycles(matmul(m, k, n, fidelity=MathFidelity.HiFi4), WH, *grid)[0]
        assert lofi <= hifi4
    # Only the tile products pay per phase; unpacking and ublock overheads do not (README: the
    # measured HiFi4/LoFi ratio is 1.1-3.3, not 4).
    big_lofi = cycles(matmul(1024, 1024, 1024, fidelity=MathFidelity.LoFi), WH, *grid)[0]
    ratio = cycles(matmul(1024, 1024, 1024, fidelity=MathFidelity.HiFi4), WH, *grid)[0] / big_lofi
    assert 1.5 < ratio < 4


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
    # enable_stable_softmax=False drops one row reduction and one subtract on the block (2 tiles)
    stable = PerfOp("sm", "Softmax", ((32, 64),), (32, 64), ("a",), attrs={"stable": True})
    unstable = PerfOp("sm", "Softmax", ((32, 64),), (32, 64), ("a",), attrs={"stable": False})
    arch = core_cycles.ARCH[WH.arch]
    skipped = core_cycles.eltwise(arch, "reduce_c", 1, 1, 2, "fp16") + core_cycles.eltwise(arch, "subtract", 1, 1, 2, "fp16")
    assert cycles(stable, WH, 1, 1, weights=())[1] - cycles(unstable, WH, 1, 1, weights=())[1] == pytest.approx(skipped)


def test_transposed_conv_reads_its_weight_layout():
    # ConvTranspose 64 -> 32 channels, 2x2 kernel, 14x14 -> 28x28: weight [Cin=64, Cout=32, 2, 2]
    op = PerfOp("up", "Conv2dTranspose", ((1, 64, 14, 14), (64, 32, 2, 2)), (1, 32, 28, 28), ("x", "w"))
    g = geometry(op, {"w"})
    assert (g.kind, g.rt, g.kt, g.ct) == ("conv", 25, 8, 1)   # 784 rows, K = 64*4 = 256, N = 32


def test_convs_with_taps_or_strides_pay_the_sparse_gather():
    # PyBuda gathers a conv's im2col operand with a sparse matmul; a 1x1 stride-1 conv needs none.
    conv3 = PerfOp("c3", "Conv2d", ((1, 64, 56, 56), (64, 64, 3, 3)), (1, 64, 56, 56), ("x", "w"))
    conv1 = PerfOp("c1", "Conv2d", ((1, 64, 56, 56), (64, 64, 1, 1)), (1, 64, 56, 56), ("x", "w"))
    strided = PerfOp("s1", "Conv2d", ((1, 64, 56, 56), (128, 64, 1, 1)), (1, 128, 28, 28), ("x", "w"))
    g3 = geometry(conv3, {"w"})
    assert core_cycles.gathered_tiles(conv3, g3) == 98 * 18          # 3136 rows x 576 inner values
    assert core_cycles.gathered_tiles(conv1, geometry(conv1, {"w"})) == 0
    assert core_cycles.gathered_tiles(strided, geometry(strided, {"w"})) == 25 * 2
    # On one core: the matmul (98 x 2 output tiles, 18 inner, Float16_b HiFi3) plus every gathered
    # tile at the sparse-matmul rate; on 2x2 cores each gathers a quarter.
    arch, l1 = core_cycles.ARCH[WH.arch], WH.l1_bytes
    gather = M.SPARSE_GATHER_CYCLES_PER_TILE["fp16"]
    matmul_part = float(core_cycles.matmul(arch, 1, 98, 2, 18, 3, DataFormat.Float16_b, l1))
    assert float(grid_cycles(conv3, g3, WH, 1, 1).math) == pytest.approx(matmul_part + 98 * 18 * gather)
    quarter = float(core_cycles.matmul(arch, 1, 49, 1, 18, 3, DataFormat.Float16_b, l1)) + 98 * 18 / 4 * gather
    assert float(grid_cycles(conv3, g3, WH, 2, 2).math) == pytest.approx(quarter)
