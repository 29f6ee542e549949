"""Cycles one core spends per input on its block of an op, fitted to silicon measurements.

A core computes t z-slices of an mblock (mb_m x mb_n ublocks) of ublocks (ub_r x ub_c tiles);
a matmul reads its inner dimension in m_k outer steps of u_kt tiles. The formula shapes follow
the backend's op model (perf_data/README.md, "The formula shape"), plus a constant per
input; features() lists the terms, COEFFICIENTS their cycles. Coefficients were fitted by
benchmarks/perf_calibration.py (--fit) on the fit half of the rows in perf_data/
{grayskull,wormhole_b0}/*.csv, minimising relative error with non-negative weights; the other
half checks them (tests/buda_runtime_sim/test_perf_calibration.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

GS, WH = "grayskull", "wormhole_b0"
APPROX, L1_ACC = "approx", "l1_acc"
MATMUL, DEPTHWISE, BINARY, UNARY, REDUCE, REDUCE_Z = "matmul", "depthwise", "binary", "unary", "reduce", "reduce_z"
BINARY_OPS = ("add", "subtract", "multiply", "maximum")
MAX_TERMS = 6


class CoeffKey(NamedTuple):
    arch: str            # GS or WH
    op: str              # backend op name: matmul, add, exp, nop, reduce_z, ...
    variant: str         # "", APPROX (SFPU approximate mode) or L1_ACC (matmul partial sums in L1)
    df: str              # "bfp8" (Bfp8/Bfp8_b) or "fp16" (Float16/Float16_b/Float32)


def family_of(op: str) -> str:
    if op in (MATMUL, DEPTHWISE, REDUCE_Z):
        return op
    if op in BINARY_OPS:
        return BINARY
    if op.startswith("reduce_"):
        return REDUCE
    return UNARY


def df_class(df: str) -> str:
    return "bfp8" if str(df).lower().startswith("bfp") else "fp16"


def features(family: str, t, mb_m, mb_n, ub_r, ub_c, m_k=1, u_kt=1, phases=1, z=1) -> np.ndarray:
    """The formula's terms for one block (scalars or broadcastable arrays); last axis = terms.

    eltwise (unary, binary, reduce over r/c): per input, per ublock, per tile.
    reduce over z: as eltwise for the first slice, then per further slice: per ublock, per tile, and
    a constant (the first slice is a copy; later ones accumulate).
    matmul/depthwise (U = m_k * mb_m * mb_n ublock steps): per input, per tile product and
    fidelity phase, per output tile carried over an outer-K step, per ublock step, per tile
    unpacked (r*k of operand 0 and k*c of operand 1 once per ublock row), per outer-K step.
    """
    t, mb_m, mb_n, ub_r, ub_c, m_k, u_kt, phases, z = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (t, mb_m, mb_n, ub_r, ub_c, m_k, u_kt, phases, z)))
    one = np.ones_like(t)
    ublocks = mb_m * mb_n
    tiles = ublocks * ub_r * ub_c
    if family in (UNARY, BINARY, REDUCE):
        return np.stack([one, t * ublocks, t * tiles], axis=-1)
    if family == REDUCE_Z:
        extra = t * (z - 1)
        return np.stack([one, t * ublocks, t * tiles, extra * ublocks, extra * tiles, extra], axis=-1)
    steps = m_k * ublocks
    return np.stack([one, t * phases * steps * u_kt * ub_r * ub_c, t * (m_k - 1) * tiles, t * steps,
                     t * steps * u_kt * ub_r * (1 + ub_c), t * (m_k - 1)], axis=-1)


# Fitted coefficients, cycles per term of features() in order. Source: perf_data/<arch>/
# <op>[-approx]-op-performance.csv (matmul: matmul-{bfp8,fp16}, matmul-l1-acc-*, grayskull
# matmul; reduce_r/c: whb0-reduce-*-performance.csv), fit half of each file.
_FITTED = {
    (GS, 'add', '', 'bfp8'): (330.274, 278.936, 49.842),
    (GS, 'exp', '', 'bfp8'): (88.057, 16.268, 2659.97),
    (GS, 'exp', 'approx', 'bfp8'): (114.921, 19.502, 669.16),
    (GS, 'exp', 'approx', 'fp16'): (118.176, 19.803, 669.023),
    (GS, 'gelu', '', 'bfp8'): (270.687, 75.966, 280.402),
    (GS, 'gelu_derivative', '', 'bfp8'): (276.84, 15.898, 3108.311),
    (GS, 'gelu_derivative', 'approx', 'bfp8'): (154.467, 6.316, 821.161),
    (GS, 'gelu_derivative', 'approx', 'fp16'): (161.185, 6.903, 820.748),
    (GS, 'log', '', 'bfp8'): (259.656, 0.0, 1409.201),
    (GS, 'matmul', '', 'bfp8'): (0.0, 31.955, 53.953, 185.706, 0.0, 167.092),
    (GS, 'maximum', '', 'bfp8'): (93.419, 50.478, 254.302),
    (GS, 'multiply', '', 'bfp8'): (267.386, 260.197, 51.838),
    (GS, 'nop', '', 'bfp8'): (0.0, 286.763, 57.7),
    (GS, 'power', '', 'bfp8'): (271.74, 176.061, 108.506),
    (GS, 'power', '', 'fp16'): (321.951, 126.577, 132.259),
    (GS, 'reciprocal', '', 'bfp8'): (245.98, 18.609, 916.354),
    (GS, 'reciprocal', 'approx', 'bfp8'): (91.611, 24.259, 905.848),
    (GS, 'reciprocal', 'approx', 'fp16'): (72.989, 24.545, 906.708),
    (GS, 'sigmoid', '', 'bfp8'): (185.064, 120.615, 160.666),
    (GS, 'sigmoid', '', 'fp16'): (276.675, 108.017, 164.589),
    (GS, 'sqrt', '', 'bfp8'): (74.408, 194.827, 158.281),
    (GS, 'subtract', '', 'bfp8'): (287.522, 277.709, 50.535),
    (WH, 'abs', '', 'bfp8'): (119.533, 62.135, 156.633),
    (WH, 'abs', '', 'fp16'): (97.198, 42.453, 169.153),
    (WH, 'add', '', 'bfp8'): (71.643, 230.482, 49.147),
    (WH, 'cosine', '', 'bfp8'): (29.716, 11.193, 1545.634),
    (WH, 'cosine', '', 'fp16'): (32.018, 11.185, 1549.785),
    (WH, 'depthwise', '', 'fp16'): (0.0, 0.0, 4.632, 0.0, 116.493, 0.0),
    (WH, 'dropout', '', 'bfp8'): (34.693, 13.818, 575.346),
    (WH, 'dropout', '', 'fp16'): (35.279, 13.782, 575.364),
    (WH, 'exp', '', 'bfp8'): (35.063, 6.841, 1770.186),
    (WH, 'exp', '', 'fp16'): (37.892, 6.73, 1774.318),
    (WH, 'exp', 'approx', 'bfp8'): (2.085, 7.945, 812.047),
    (WH, 'exp', 'approx', 'fp16'): (16.287, 8.625, 815.656),
    (WH, 'gelu', '', 'bfp8'): (13.462, 7.398, 268.041),
    (WH, 'gelu', '', 'fp16'): (39.026, 9.332, 271.579),
    (WH, 'gelu_derivative', '', 'bfp8'): (50.443, 10.668, 2219.417),
    (WH, 'gelu_derivative', '', 'fp16'): (49.801, 9.407, 2223.718),
    (WH, 'gelu_derivative', 'approx', 'bfp8'): (100.48, 10.921, 384.459),
    (WH, 'gelu_derivative', 'approx', 'fp16'): (111.638, 9.509, 384.755),
    (WH, 'log', '', 'bfp8'): (1.658, 7.944, 716.049),
    (WH, 'log', '', 'fp16'): (8.873, 9.61, 719.585),
    (WH, 'lrelu', '', 'bfp8'): (32.145, 14.993, 322.828),
    (WH, 'lrelu', '', 'fp16'): (39.19, 14.708, 322.779),
    (WH, 'matmul', '', 'bfp8'): (270.2, 10.201, 24.72, 159.658, 6.079, 206.374),
    (WH, 'matmul', '', 'fp16'): (190.704, 16.436, 48.867, 75.383, 0.0, 116.447),
    (WH, 'matmul', 'l1_acc', 'bfp8'): (806.831, 15.974, 20.047, 119.49, 2.106, 0.0),
    (WH, 'matmul', 'l1_acc', 'fp16'): (431.01, 15.899, 0.0, 35.067, 1.412, 0.0),
    (WH, 'maximum', '', 'bfp8'): (18.15, 12.204, 332.967),
    (WH, 'multiply', '', 'bfp8'): (72.421, 228.607, 52.184),
    (WH, 'nop', '', 'bfp8'): (17.415, 188.066, 48.164),
    (WH, 'nop', '', 'fp16'): (3.85, 89.26, 123.776),
    (WH, 'power', '', 'fp16'): (158.24, 73.95, 191.158),
    (WH, 'reciprocal', '', 'bfp8'): (1.67, 7.967, 908.03),
    (WH, 'reciprocal', '', 'fp16'): (2.206, 7.875, 912.128),
    (WH, 'reciprocal', 'approx', 'bfp8'): (0.012, 8.703, 779.904),
    (WH, 'reciprocal', 'approx', 'fp16'): (114.066, 2.877, 782.911),
    (WH, 'reduce_c', '', 'bfp8'): (106.367, 9.049, 89.231),
    (WH, 'reduce_r', '', 'bfp8'): (241.434, 0.0, 59.107),
    (WH, 'reduce_z', '', 'bfp8'): (105.763, 125.047, 53.158, 0.0, 313.009, 96.025),
    (WH, 'reduce_z', '', 'fp16'): (55.601, 87.353, 94.092, 0.0, 336.828, 116.104),
    (WH, 'sigmoid', '', 'bfp8'): (156.743, 30.599, 260.557),
    (WH, 'sigmoid', '', 'fp16'): (154.01, 35.29, 263.628),
    (WH, 'sine', '', 'bfp8'): (25.418, 8.955, 1707.245),
    (WH, 'sine', '', 'fp16'): (24.145, 9.186, 1711.514),
    (WH, 'sqrt', '', 'bfp8'): (1.913, 7.951, 908.031),
    (WH, 'sqrt', '', 'fp16'): (2.757, 7.843, 912.128),
    (WH, 'square', '', 'bfp8'): (7.441, 42.225, 195.922),
    (WH, 'square', '', 'fp16'): (41.043, 20.835, 205.085),
    (WH, 'subtract', '', 'bfp8'): (91.085, 229.685, 49.036),
    (WH, 'tanh', '', 'bfp8'): (57.159, 40.75, 195.052),
    (WH, 'tanh', '', 'fp16'): (92.021, 19.304, 204.538),
}
COEFFICIENTS: dict[CoeffKey, tuple] = {CoeffKey(*key): value for key, value in _FITTED.items()}

# The sparse matmul PyBuda uses to gather a conv's or pool's input taps (im2col on the device):
# cycles per output tile, the median over the fit half of wormhole_b0/matmul-sparse-op-
# performance.csv (LoFi rows for bfp8, HiFi2-4 rows for fp16). Crude: the real cost follows the
# sparse pattern's non-zero counts, which a conv's shape does not give; held-out median error
# about 30 % (benchmarks/perf_calibration.py).
SPARSE_GATHER_CYCLES_PER_TILE = {"bfp8": 179.589, "fp16": 223.429}
SPARSE_GATHER_ARCH = WH


def coefficients(arch: str, op: str, variant: str = "", df: str = "bfp8") -> tuple:
    """The closest measured coefficient set: exact, else without the variant, else the other
    format, else the other arch (ops measured on one arch only), else datacopy (nop)."""
    return _lookup(arch, op, variant, df)[0]


def _lookup(arch: str, op: str, variant: str, df: str) -> tuple[tuple, str]:
    """(coefficients, the arch they were measured on)."""
    other_df = "fp16" if df == "bfp8" else "bfp8"
    other_arch = GS if arch == WH else WH
    for key in ((arch, op, variant, df), (arch, op, "", df), (arch, op, variant, other_df), (arch, op, "", other_df),
                (other_arch, op, variant, df), (other_arch, op, "", df), (other_arch, op, "", other_df),
                (arch, "nop", "", df), (arch, "nop", "", other_df)):
        found = COEFFICIENTS.get(CoeffKey(*key))
        if found is not None:
            return found, key[0]
    raise KeyError(f"no measured coefficients for {op!r} on {arch}")


def block_cycles(arch: str, op: str, t, mb_m, mb_n, ub_r, ub_c, m_k=1, u_kt=1, phases=1, z=1,
                 df: str = "bfp8", variant: str = "") -> np.ndarray:
    """Cycles per input for one core's block of `op` (arrays broadcast): the fitted formula.

    An op measured on the other arch only (depthwise and the reductions, measured on Wormhole_B0)
    is scaled by matmul_arch_ratio for the same block: both FPU ops move the same tiles through
    the same unpack-math-pack pipeline, and matmul is measured on both."""
    coeff, measured_on = _lookup(arch, op, variant, df)
    terms = features(family_of(op), t, mb_m, mb_n, ub_r, ub_c, m_k, u_kt, phases, z)
    cycles = terms[..., :len(coeff)] @ np.asarray(coeff)
    if measured_on != arch:
        cycles = cycles * matmul_arch_ratio(arch, t, mb_m, mb_n, ub_r, ub_c, m_k, u_kt, phases, df)
    return cycles


def matmul_arch_ratio(arch: str, t, mb_m, mb_n, ub_r, ub_c, m_k=1, u_kt=1, phases=1, df: str = "bfp8") -> np.ndarray:
    """Matmul cycles of this block on `arch` over the other arch's, both from measured fits
    (Grayskull over Wormhole_B0 is 1.4-2.4 on BERT's and MobileNet's blocks: half the FPU width)."""
    other = GS if arch == WH else WH
    mine = features(MATMUL, t, mb_m, mb_n, ub_r, ub_c, m_k, u_kt, phases) @ _padded(coefficients(arch, MATMUL, "", df))
    theirs = features(MATMUL, t, mb_m, mb_n, ub_r, ub_c, m_k, u_kt, phases) @ _padded(coefficients(other, MATMUL, "", df))
    return mine / theirs


def _padded(coeff: tuple) -> np.ndarray:
    return np.pad(np.asarray(coeff, dtype=np.float64), (0, MAX_TERMS - len(coeff)))
