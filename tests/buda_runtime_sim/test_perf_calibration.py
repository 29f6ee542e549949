"""The per-core cycle formulas against silicon measurements they were not fitted on (no TVM, no model)."""

import numpy as np
import pytest

from buda_runtime_sim.perf import calibration as C
from buda_runtime_sim.perf import op_model as M

@pytest.fixture(scope="module")
def halves():
    return C.split(C.load_rows())


def test_the_halves_share_no_configuration(halves):
    fit, held = halves
    assert len(fit) > 3000 and len(held) > 3000
    assert not set(fit.config_id) & set(held.config_id)


@pytest.mark.parametrize("arch", [M.GS, M.WH])
@pytest.mark.parametrize("target", C.TARGETS)
def test_held_out_error_meets_the_targets(halves, arch, target):
    _, held = halves
    stats = {s.group: s for s in C.errors(held, M.COEFFICIENTS, by=C.by_target)}
    s = stats[(arch, target)]
    assert s.rows >= 50
    assert s.median <= C.TARGET_MEDIAN and s.p90 <= C.TARGET_P90, s


def test_shipped_coefficients_are_the_fit_of_the_fit_half(halves):
    # Guards against hand-tuned constants: refitting the fit half reproduces op_model.COEFFICIENTS.
    fit, _ = halves
    refit = C.fit(fit)
    assert set(refit) == set(M.COEFFICIENTS)
    for key, values in refit.items():
        shipped = M.COEFFICIENTS[key]
        if np.allclose(values[:len(shipped)], shipped, rtol=1e-3, atol=1e-2):
            continue
        # Where two features are proportional over every measured row of a key, the fit is not
        # unique: which of them takes the weight depends on the last bits of the least-squares
        # solves (numpy/LAPACK builds differ). Then the shipped coefficients must predict exactly
        # what the refit predicts on that key's rows.
        rows = fit.select([k == key for k in fit.key])
        np.testing.assert_allclose(C.predict(rows, {key: shipped}), C.predict(rows, {key: values}),
                                   rtol=1e-3, err_msg=f"{key}: shipped {shipped}, refit {values}")


def test_worked_examples_of_the_data_readme():
    # Wormhole exp, 2x2 mblock of 1x1 ublocks: 913467 / 128 = 7136 cycles per input (Bfp8_b, LoFi).
    assert M.block_cycles(M.WH, "exp", 1, 2, 2, 1, 1) == pytest.approx(7136, rel=0.01)
    # Wormhole matmul Bfp8_b LoFi, mblock 4x4, ublock 2x4, m_k 1, u_kt 8: 21088 cycles per input.
    assert M.block_cycles(M.WH, "matmul", 1, 4, 4, 2, 4, 1, 8) == pytest.approx(21088, rel=0.1)
    # Same 256 products split as m_k 16 x u_kt 1 cost far more (24862 vs 6642 cycles).
    deep = M.block_cycles(M.WH, "matmul", 1, 2, 2, 2, 2, 16, 1)
    flat = M.block_cycles(M.WH, "matmul", 1, 2, 2, 2, 2, 1, 16)
    assert deep / flat == pytest.approx(24862 / 6642, rel=0.2)


def test_unmeasured_ops_fall_back_to_the_closest_measurement():
    assert M.coefficients(M.GS, "tanh") == M.COEFFICIENTS[M.CoeffKey(M.WH, "tanh", "", "bfp8")]
    assert M.coefficients(M.WH, "no_such_op") == M.COEFFICIENTS[M.CoeffKey(M.WH, "nop", "", "bfp8")]


def test_sparse_gather_constant_is_the_fit_half_median():
    for df, (per_tile, median, _) in C.sparse_gather_fit().items():
        assert per_tile == pytest.approx(M.SPARSE_GATHER_CYCLES_PER_TILE[df], rel=1e-4)
        assert median < 0.4          # crude, and said so: the real cost follows the sparse pattern
