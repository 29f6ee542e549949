"""Shortcuts in the kernels' plumbing give numpy's own bits: the reductions as direct ufunc
reduces (np.mean's ufunc calls without its wrappers) and quantize's Float16_b branch."""

import ml_dtypes
import numpy as np
import pytest

from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.formats import quantize
from buda_runtime_sim.kernels import reduce as reduce_kernels

_SPECIALS = np.array([np.inf, -np.inf, np.nan, -0.0, 3.4e38, -3.4e38, 1e-45, 1e-39], np.float32)


def _values(rng, shape, specials: bool) -> np.ndarray:
    x = (rng.standard_normal(shape) * 100).astype(np.float32)
    if specials:
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, min(4, flat.size), replace=False)] = rng.choice(_SPECIALS, min(4, flat.size))
    return x


def _same_bits(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    np.testing.assert_array_equal(x.view(np.uint32), y.view(np.uint32))


@pytest.mark.parametrize("op, reference", [("ReduceSum", np.sum), ("ReduceAvg", np.mean), ("ReduceMax", np.max),
                                           ("ReduceMin", np.min)])
@pytest.mark.parametrize("shape", [(4, 32, 64), (128, 64), (4, 2, 32, 33), (7,), (1, 1)])
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("keepdims", [True, False])
def test_reductions_give_numpys_bits(op, reference, shape, specials, keepdims):
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    x = _values(rng, shape, specials)
    fn = reduce_kernels.REDUCTIONS[op]
    with np.errstate(all="ignore"):
        for axis in range(len(shape)):
            _same_bits(fn(x, axis=axis, keepdims=keepdims), reference(x, axis=axis, keepdims=keepdims))


def test_mean_of_an_empty_axis_is_numpys():
    x = np.zeros((3, 0), np.float32)
    with pytest.warns(RuntimeWarning), np.errstate(all="ignore"):
        _same_bits(reduce_kernels.REDUCTIONS["ReduceAvg"](x, axis=1, keepdims=True), np.mean(x, axis=1, keepdims=True))


@pytest.mark.parametrize("shape", [(4, 32, 64), (3, 5), ()])
def test_quantize_bfloat16_branch(shape):
    """The Float16_b branch rounds as ml_dtypes does (nearest even, NaN and inf kept) except that a
    finite value that would overflow saturates at bfloat16's largest, and equals the general path
    (a float64 input takes it)."""
    rng = np.random.default_rng(0)
    x = _values(rng, shape, specials=bool(shape))
    bits = rng.integers(0, 1 << 32, max(1, x.size), dtype=np.uint64).astype(np.uint32).view(np.float32)
    top = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    for values in (x, bits.reshape(x.shape) if x.ndim else bits[:1].reshape(())):
        with np.errstate(all="ignore"):
            expected = values.astype(ml_dtypes.bfloat16).astype(np.float32)
            expected = np.where(np.isinf(expected) & np.isfinite(values), np.copysign(top, values), expected)
            expected = expected.astype(np.float32)
            _same_bits(quantize(values, DF.Float16_b), expected)
            _same_bits(quantize(values.astype(np.float64), DF.Float16_b), expected)   # the general path


def test_quantize_still_checks_the_rounding_name():
    with pytest.raises(ValueError, match="rounding"):
        quantize(np.ones(4, np.float32), DF.Float16_b, rounding="nearest")
