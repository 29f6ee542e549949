"""Matmul's fused bias: the product rounded to the output format, then the bias added and the sum
rounded again, exactly as a separate Add of the rounded product and the bias gives it (the kernel
adds a bias row or a bias of the product's shape in place on the product's storage; the rest goes through
eltwise.binary)."""

from __future__ import annotations

import numpy as np
import pytest

from buda_runtime_sim import kernels
from buda_runtime_sim.compact_tensor import CompactTensor
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.numerics_config import OpNumerics
from buda_runtime_sim.tensor import Tensor


def _tensor(rng, shape, df=DF.Float16_b, scale=1.0) -> Tensor:
    return Tensor.from_array((rng.standard_normal(shape) * scale).astype(np.float32), df)


def _two_steps(inputs, numerics) -> Tensor:
    product = kernels.get_kernel("Matmul")(inputs[:2], {}, numerics)
    return kernels.get_kernel("Add")([product, inputs[2]], {}, numerics)


def _assert_same_storage(fused: Tensor, reference: Tensor):
    assert fused.shape == reference.shape and fused.data_format == reference.data_format
    np.testing.assert_array_equal(fused.padded.view(np.uint32), reference.padded.view(np.uint32))


@pytest.mark.parametrize("shape_a, shape_b", [((128, 64), (64, 64)), ((4, 64), (64, 4)), ((40, 96), (96, 48)),
                                              ((2, 33, 64), (64, 70)), ((128, 64), (64, 256))])
@pytest.mark.parametrize("numerics", [OpNumerics(), OpNumerics(accumulate_df=DF.Float32),
                                      OpNumerics(output_df=DF.Float32, accumulate_df=DF.Float32),
                                      OpNumerics(output_df=DF.Bfp8_b)])
@pytest.mark.parametrize("full", [False, True])
def test_fused_bias_equals_a_separate_add(shape_a, shape_b, numerics, full):
    """A bias row, or a bias of the product's shape (a residual the graph fused into the matmul)."""
    rng = np.random.default_rng(sum(shape_a) + sum(shape_b))
    bias_shape = shape_a[:-1] + shape_b[-1:] if full else (shape_b[-1],)
    inputs = [_tensor(rng, shape_a), _tensor(rng, shape_b, scale=0.1), _tensor(rng, bias_shape, scale=3.0)]
    fused = kernels.get_kernel("Matmul")(inputs, {}, numerics)
    _assert_same_storage(fused, _two_steps(inputs, numerics))
    if fused.shape != tuple(fused.padded.shape):        # padding stays zero
        rows, cols = fused.shape[-2:]
        assert not fused.padded[..., rows:, :].any() and not fused.padded[..., :, cols:].any()


def test_fused_bias_specials_and_overflow():
    rng = np.random.default_rng(7)
    a, b = _tensor(rng, (64, 64)), _tensor(rng, (64, 32))
    bias = rng.standard_normal(32).astype(np.float32)
    bias[:4] = [np.inf, -np.inf, np.nan, 3.3e38]         # the last overflows where the product is large
    a.padded[0, :] = 1e19
    b.padded[:, 3] = 1e19
    inputs = [a, b, Tensor.from_array(bias, DF.Float16_b)]
    fused = kernels.get_kernel("Matmul")(inputs, {}, OpNumerics())
    assert np.isinf(fused.padded[0, 3]) and np.isnan(fused.padded[0, 2])
    _assert_same_storage(fused, _two_steps(inputs, OpNumerics()))


@pytest.mark.parametrize("bias_shape", [(1,), (), (5, 1), (1, 24), (24,), (5, 24)])
def test_other_biases_take_the_elementwise_add(bias_shape):
    rng = np.random.default_rng(3)
    values = rng.standard_normal(bias_shape).astype(np.float32)
    compact = bias_shape in ((24,), (5, 24))              # kept unpadded: eltwise.binary adds its values
    bias = CompactTensor(values, DF.Float16_b) if compact else Tensor.from_array(values, DF.Float16_b)
    inputs = [_tensor(rng, (5, 40)), _tensor(rng, (40, 24)), bias]
    _assert_same_storage(kernels.get_kernel("Matmul")(inputs, {}, OpNumerics()), _two_steps(inputs, OpNumerics()))
