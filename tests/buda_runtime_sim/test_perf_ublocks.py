"""The vectorised ublock search (every ublock shape along one array axis) picks the cycles a
shape-by-shape loop picks, for every op family, arch and format: the same to the last bit or
two of a float64 (a scalar block's terms are summed by a matrix-vector product instead of a dot
product, in another order)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.perf import core_cycles as C
from buda_runtime_sim.perf import op_model as M


def _loop_eltwise(arch, op, t, rows, cols, df, z=1):
    best = np.full(np.broadcast(t, rows, cols).shape, np.inf)
    for ur, uc in C.UBLOCK_SHAPES:
        mb_m, mb_n = -(-rows // ur), -(-cols // uc)
        cycles = M.block_cycles(arch, op, t, mb_m, mb_n, ur, uc, z=z, df=df)
        if df == "fp16" and op in ("add", "subtract", "multiply"):
            coeff = M.coefficients(arch, op, "", df)
            cycles = cycles + (C.BINARY_FP16_TILE_FACTOR - 1) * coeff[2] * t * mb_m * mb_n * ur * uc
        best = np.minimum(best, cycles)
    return best


def _loop_matmul(arch, t, rows, cols, kt, phases, fmt, l1_bytes):
    m_k, u_kt = C._inner_split(kt, rows, cols, fmt, l1_bytes)
    best = np.full(np.broadcast(t, rows, cols).shape, np.inf)
    for ur, uc in C.UBLOCK_SHAPES:
        for variant in (("", M.L1_ACC) if arch == M.WH else ("",)):
            best = np.minimum(best, M.block_cycles(arch, "matmul", t, -(-rows // ur), -(-cols // uc), ur, uc, m_k,
                                                   u_kt, phases, df=C._df(fmt), variant=variant))
    return best


def _grid():
    rows, cols = np.meshgrid(np.arange(1, 13), np.arange(1, 11), indexing="ij")
    return -(-40 // rows), -(-24 // cols)     # tiles per core of a 40 x 24 tile op on every grid


@pytest.mark.parametrize("arch", [M.GS, M.WH])
@pytest.mark.parametrize("op, df", [("add", "fp16"), ("multiply", "bfp8"), ("exp", "fp16"), ("gelu", "bfp8"),
                                    ("reduce_c", "fp16"), ("nop", "bfp8")])
def test_eltwise_search_is_the_loop(arch, op, df):
    rows, cols = _grid()
    assert_allclose(C.eltwise(arch, op, 3, rows, cols, df), _loop_eltwise(arch, op, 3, rows, cols, df), rtol=1e-14)
    assert_allclose(C.eltwise(arch, op, 2, 5, 7, df), _loop_eltwise(arch, op, 2, 5, 7, df), rtol=1e-14)   # scalars


@pytest.mark.parametrize("arch", [M.GS, M.WH])
@pytest.mark.parametrize("fmt", [DataFormat.Float16_b, DataFormat.Bfp8_b])
@pytest.mark.parametrize("kt, phases", [(1, 1), (24, 2), (36, 4)])
def test_matmul_search_is_the_loop(arch, fmt, kt, phases):
    rows, cols = _grid()
    got = C.matmul(arch, 1, rows, cols, kt, phases, fmt, 1 << 20)
    assert_allclose(got, _loop_matmul(arch, 1, rows, cols, kt, phases, fmt, 1 << 20), rtol=1e-14)


def test_depthwise_search_is_the_loop():
    rows, cols = _grid()
    expected = np.full(rows.shape, np.inf)
    for ur, uc in C.UBLOCK_SHAPES:
        expected = np.minimum(expected, M.block_cycles(M.WH, "depthwise", 1, -(-rows // ur), -(-cols // uc), ur, uc,
                                                       9, 1, df="fp16"))
    assert_allclose(C.depthwise(M.WH, 1, rows, cols, 9, DataFormat.Float16_b), expected, rtol=1e-14)
