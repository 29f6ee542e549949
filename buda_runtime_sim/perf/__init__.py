"""The performance model: how fast a graph of device ops would run on a Tenstorrent board.

Static and explainable: it reads op shapes, data formats and math fidelities, never executes
numerics. Hardware figures: spec/perf_model.md. Everything below is per *run*, i.e. one pass of
the graph at the shapes it was built with (`OpGraph.samples_per_run` samples).

1. Boards (boards.py). gs_e75, gs_e150, wh_n150, wh_n300: arch, chips, a grid of worker cores
   (rows x columns), clock, L1, DRAM bandwidth. A chip has 10 worker rows at NoC rows 1-5 and
   7-11; `harvested_rows` lists the fused-off ones (validated) and shrinks the grid. Ops are
   placed on at most OP_GRID_ROWS rows: 8 on Wormhole_B0 (an n150's 9x8 workers give an 8x8 op
   grid, as every Wormhole netlist in perf_data shows: at most 64 cores per epoch).

2. Ops to tiles (costs.py). Only the last two dims are tiled (32x32). Each op becomes a
   Geometry: z slices, rt row tiles and ct column tiles of its work matrix, kt inner tiles (or
   kernel taps). A conv is a matmul on the im2col matrix [Ho*Wo, Cin/g*kh*kw] x [.., Cout];
   a depthwise conv and a pool are per-tap eltwise work on [Ho*Wo, C]. A grid of r x c cores
   splits rt over rows and ct over columns: a core owns z*ceil(rt/r)*ceil(ct/c) output tiles.

3. Cycles of an op on a grid = max(core cycles, data cycles) for one core.
   - core cycles (core_cycles.py, op_model.py): the core's share (t slices of a rows x cols
     tile block, plus kt inner tiles for a matmul) is blocked into ublocks of at most 8 tiles
     (the cheapest shape wins) and, for a matmul, m_k outer steps of u_kt inner tiles sized to
     fit L1; it is priced by per-op formulas fitted to silicon measurements of single ops
     (perf_data: cycles per input for matmul, eltwise, SFPU, reduce and depthwise blocks on
     Grayskull and Wormhole_B0; held-out error in benchmarks/perf_calibration.py). They include
     the per-input, per-ublock and per-outer-K-step overheads and the unpacking of NoC-fed inputs.
     Ops measured on Wormhole_B0 only are scaled to Grayskull by the two arches' matmul formulas.
     Softmax and layernorm are split as PyBuda places them (row_reductions.py): a wide
     elementwise part and a tail holding the row reductions, on one column of cores. Their
     backward ops (SoftmaxBw, LayernormBw) are priced as the backend ops they stand for, unsplit
     (a layernorm's weight and bias gradients on the input's tiles). Attention's
     ops (matmuls of two activations, softmax, layernorm) keep their heads in every core (t).
     Convs with taps or strides, depthwise convs and pools add PyBuda's sparse-matmul gather.
   - data cycles (data_movement.py, after PyBuda's balancer): the slowest of reading each input
     operand and writing the output, over the NoC at 16 bytes a cycle per core; weights that are
     not resident come from DRAM at the per-core rate of the op's cores reading at once.
   - L1: a core keeps 260 KiB for firmware, overlay and streams; grids whose double-buffered
     blocks overflow the rest are illegal, and weights stay resident (loaded once per epoch)
     only if their share fits beside the buffers.
   Transposes/reshapes take no cores (applied on edges); ops on weights only are folded; a ReLU
   and a bias add after a matmul/conv fuse into their producer (prepare.py), as in PyBuda's netlists.

4. Balancer and placer (balancer.py, placer.py). For a target stage time T each op takes the
   fewest cores reaching T (or its fastest grid), among grids dividing its tiles as PyBuda's
   legalizer requires; ops are shelf-packed onto the core grid in
   schedule order; a full grid, a new device program or `set_epoch_break` starts a new epoch
   (`set_chip_break`: the next chip; `PlacementConfig.num_chips` uses part of a board). `override_op_size` pins a grid; `place_on_one_row` allows
   only 1 x c grids. The T giving the smallest total time is kept; then each epoch's idle cores
   go to its slowest op, DRAM queues counted (next faster grid), while the epoch still fits.

5. Epochs (epochs.py). An epoch is a pipeline all runs of the microbatch stream through:
       epoch cycles = switch + prologue + fill + (runs - 1) x stage
   stage = slowest op, its DRAM queues included (tensors from other epochs or input queues,
   outputs for other epochs or output queues, at the per-core DRAM rate of the epoch's
   DRAM-reading cores), or the epoch's whole DRAM traffic at the board's measured bandwidth if
   slower; fill = the longest producer chain for the first run; prologue = resident weights
   loaded from DRAM; switch = the epoch's binaries (120 KiB a core) from DRAM, and from the host
   too when the program has more epochs than the 32-slot binary cache.

6. Overall (estimate.py). time = sum of epoch cycles / clock + host transfers, where every
   device program's inputs cross PCIe at 24 GB/s and its outputs come back at 11 GB/s, once
   per run; each graph break adds such a round trip. samples/s = microbatch / time. Math
   utilisation = matrix-unit cycles the logical (unpadded) MACs need / (placeable cores x
   device cycles).

Left out: NoC congestion, hops and reblocking between mismatched grids, fork-join buffering,
fused eltwise chains beyond softmax/layernorm, per-op start-up inside an epoch (not in the
measurements), PyBuda's Ribbon balancer (one row count per epoch), host compute time.
Chip-to-chip Ethernet (a tensor crossing chips loads each link on its way; a link can be an
epoch's slowest stage) and data parallel runs: chips.py, data_parallel.py, docs/scaling.md.
benchmarks/perf_netlists.py puts our placements beside PyBuda's netlists (netlist_summary.md).

Accuracy (benchmarks/perf_estimates.py, each published run at its own microbatch, format and
fidelity): see docs/perf_model.md. Nothing is fitted to the published throughputs.
"""

from .boards import BOARDS, HARVESTABLE_ROWS, Board, get_board
from .config import PlacementConfig
from .estimate import estimate
from .ops import HostTransfer, OpGraph, PerfOp
from .report import EpochRow, OpRow, PerfReport, TransferRow

__all__ = ["BOARDS", "HARVESTABLE_ROWS", "Board", "EpochRow", "HostTransfer", "OpGraph", "OpRow", "PerfOp",
           "PerfReport", "PlacementConfig", "TransferRow", "estimate", "get_board"]
