"""The fast paths of fidelity_matmul give the same bits as the plain path: skipping masks a known
format makes the identity, and reusing a read-only weight's slices from the cache its Tensor owns."""

import gc
import weakref

import numpy as np
import pytest
import torch

from buda_runtime_sim import kernels
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.dataformat import MathFidelity as MF
from buda_runtime_sim.fidelity import fidelity_matmul
from buda_runtime_sim.formats import quantize
from buda_runtime_sim.numerics_config import OpNumerics
from buda_runtime_sim.tensor import Tensor

FIDELITIES = [MF.LoFi, MF.HiFi2, MF.HiFi3, MF.HiFi4]


def _operands(fmt_a, fmt_b, seed=0):
    rng = np.random.default_rng(seed)
    a = quantize(rng.standard_normal((3, 64, 96)).astype(np.float32), fmt_a)
    b = quantize(rng.standard_normal((96, 64)).astype(np.float32), fmt_b)
    b.flags.writeable = False
    return a, b


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("fmt_a, fmt_b", [(DF.Float16_b, DF.Float16_b), (DF.Bfp8_b, DF.Bfp8_b),
                                          (DF.Float16, DF.Bfp4_b), (DF.Float32, DF.Float16_b)])
def test_known_formats_and_cached_slices_change_no_bit(fidelity, fmt_a, fmt_b):
    a, b = _operands(fmt_a, fmt_b)
    plain = fidelity_matmul(a, b, fidelity, DF.Float32)
    cache = {}
    for _ in range(2):                                  # the second call reads the cache
        fast = fidelity_matmul(a, b, fidelity, DF.Float32, a_format=fmt_a, b_format=fmt_b, b_cache=cache)
        np.testing.assert_array_equal(fast, plain)
    assert cache


def test_weight_slices_live_on_the_weight_tensor():
    a, b = _operands(DF.Float16_b, DF.Float16_b)
    weight = Tensor.from_array(b, DF.Float16_b)
    activations = Tensor.from_array(a, DF.Float16_b)
    assert activations.derived() is None               # writable storage may change: never cached
    weight.padded.flags.writeable = False
    numerics = OpNumerics(math_fidelity=MF.HiFi3)
    first = kernels.get_kernel("Matmul")([activations, weight], {}, numerics)
    assert weight.derived()                            # HiFi3's slices, kept on the tensor
    second = kernels.get_kernel("Matmul")([activations, weight], {}, numerics)
    np.testing.assert_array_equal(first.padded, second.padded)
    cached = next(iter(weight.derived().values()))    # (slices..., or the bfloat16 terms and their count)
    slices = weakref.ref(next(part for part in cached if isinstance(part, torch.Tensor)))
    del weight, cached
    gc.collect()
    assert slices() is None                            # nothing global keeps them alive
