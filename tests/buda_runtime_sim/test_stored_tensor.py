"""Weights held as their device format's bytes give the float32 storage a plain Tensor holds,
bit for bit, and every kernel computes the same bits from them; they hold the format's bytes only."""

import gc

import ml_dtypes
import numpy as np
import pytest

from buda_runtime_sim import derived_budget, kernels, stored_tensor
from buda_runtime_sim.blockfloat import BFP_FORMATS, decode_blocks, decode_blocks_fast
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.dataformat import MathFidelity as MF
from buda_runtime_sim.module import Parameter
from buda_runtime_sim.numerics_config import OpNumerics
from buda_runtime_sim.stored_tensor import StoredTensor, from_value, kept
from buda_runtime_sim.tensor import Tensor

FORMATS = [DF.Float16_b, DF.Float16, DF.Lf8, DF.Bfp8_b, DF.Bfp4_b, DF.Bfp2_b, DF.Bfp8, DF.Bfp4, DF.Bfp2]


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch):
    monkeypatch.setattr(stored_tensor, "MIN_ELEMENTS", 64)


def _values(shape, seed=0, specials=True) -> np.ndarray:
    values = (np.random.default_rng(seed).standard_normal(shape) * 4).astype(np.float32)
    if specials:
        # (3.4e38 rounds past bfloat16's largest value, -7e4 past float16's and e5m2's: saturated)
        values.reshape(-1)[:8] = [np.inf, -np.inf, np.nan, -0.0, 1e-40, 3e38, 3.4e38, -7e4]
    return values


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint32)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(64, 96), (3, 40, 50), (100,), (70, 1)])
def test_storage_is_what_a_plain_tensor_holds(fmt, shape):
    values = _values(shape)
    plain = Tensor.from_array(values, fmt)
    stored = from_value(values, fmt)
    assert type(stored) is StoredTensor and stored.shape == plain.shape
    assert np.array_equal(_bits(stored.padded), _bits(plain.padded))
    assert np.array_equal(_bits(stored.logical()), _bits(plain.logical()))
    assert stored.padded.flags.c_contiguous and not stored.padded.flags.writeable


@pytest.mark.parametrize("fmt, bytes_per_value", [(DF.Float16_b, 2), (DF.Float16, 2), (DF.Lf8, 1),
                                                  (DF.Bfp8_b, 1 + 1 / 16), (DF.Bfp4_b, 0.5 + 1 / 16),
                                                  (DF.Bfp2_b, 0.25 + 1 / 16)])
def test_held_as_the_formats_bytes(fmt, bytes_per_value):
    stored = from_value(_values((128, 256), specials=False), fmt)
    assert stored.nbytes == 128 * 256 * bytes_per_value
    padded = stored.padded
    del padded
    assert stored.nbytes == 128 * 256 * bytes_per_value       # reading the storage kept nothing


def test_a_bfloat16_framework_weight_is_its_own_device_copy():
    weight = _values((64, 96), specials=False).astype(ml_dtypes.bfloat16)
    stored = from_value(weight, DF.Float16_b)
    assert np.shares_memory(stored.codec.array, weight)
    assert np.array_equal(stored.logical(), weight.astype(np.float32))
    other = from_value(weight, DF.Bfp8_b)                     # another format: converted
    assert np.array_equal(_bits(other.padded), _bits(Tensor.from_array(weight.astype(np.float32), DF.Bfp8_b).padded))


def test_small_tensors_stay_plain(monkeypatch):
    monkeypatch.setattr(stored_tensor, "MIN_ELEMENTS", 1 << 16)
    tensor = from_value(_values((64, 96)), DF.Float16_b)
    assert type(tensor) is Tensor and not tensor.padded.flags.writeable


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_transposed_weight_shares_the_bytes(fmt):
    values = _values((2, 64, 96))
    stored = from_value(values, fmt)
    plain = Tensor.from_array(values, fmt)
    plain.padded.flags.writeable = False
    for dims in [(1, 2), (0, 1), (0, 2)]:
        got = kernels.get_kernel("Transpose")([stored], {"dim0": dims[0], "dim1": dims[1]}, OpNumerics())
        want = kernels.get_kernel("Transpose")([plain], {"dim0": dims[0], "dim1": dims[1]}, OpNumerics())
        assert type(got) is StoredTensor and got.nbytes == 0 and got.shape == want.shape
        assert np.array_equal(_bits(got.padded), _bits(want.padded))
        back = got.swapped(*dims)
        assert np.array_equal(_bits(back.padded), _bits(stored.padded))


@pytest.mark.parametrize("fmt", [DF.Float16_b, DF.Lf8, DF.Bfp8_b])
def test_a_kept_transpose_gets_its_own_bytes_in_its_order(fmt):
    values = _values((64, 96), specials=fmt is not DF.Bfp8_b)
    values[:, :32] = 1.0                      # (these blocks hold exactly along either dim)
    stored = from_value(values, fmt)
    swapped = kernels.get_kernel("Transpose")([stored], {"dim0": 0, "dim1": 1}, OpNumerics())
    held = kept(swapped)
    assert np.array_equal(_bits(held.padded), _bits(swapped.padded))
    if fmt is DF.Bfp8_b:                      # Bfp8_b random values: new blocks cannot hold them, a view stays
        assert held is swapped
    else:                                     # a view read in strides on every call no longer
        assert held.nbytes == stored.nbytes and held.codec.array.flags.c_contiguous
    assert kept(held) is held


def test_kept_results_are_held_as_bytes_only_when_exact():
    values = Tensor.from_array(_values((64, 96)), DF.Float16_b)
    held = kept(values)
    assert type(held) is StoredTensor and np.array_equal(_bits(held.padded), _bits(values.padded))
    wide = Tensor.from_array(_values((64, 96)), DF.Float32)            # Float32: kept as it is
    assert kept(wide) is wide and not wide.padded.flags.writeable
    blocks = Tensor.from_array(_values((64, 96), specials=False), DF.Bfp8_b)
    moved = Tensor(np.ascontiguousarray(blocks.padded.T), (96, 64), DF.Bfp8_b)   # blocks along the old columns
    assert kept(moved) is moved                                          # not exactly Bfp8_b along its rows


@pytest.mark.parametrize("fmt", list(BFP_FORMATS))
def test_fast_block_decode_is_the_reference(fmt):
    spec = BFP_FORMATS[fmt]
    rng = np.random.default_rng(1)
    exponents = rng.integers(0, 256, 4096, dtype=np.uint8)
    codes = rng.integers(0, 1 << spec.code_bits, (4096, 16), dtype=np.uint8)
    assert np.array_equal(_bits(decode_blocks_fast(exponents, codes, spec)), _bits(decode_blocks(exponents, codes, spec)))


def _matmul(a, b, fidelity, accumulate=DF.Float16_b):
    numerics = OpNumerics(math_fidelity=fidelity, accumulate_df=accumulate)
    return kernels.get_kernel("Matmul")([a, b], {}, numerics).padded


@pytest.mark.parametrize("route", ["0", "1"])
@pytest.mark.parametrize("budget", ["0", "64"])
@pytest.mark.parametrize("fidelity", [MF.LoFi, MF.HiFi2, MF.HiFi3, MF.HiFi4])
@pytest.mark.parametrize("fmt", [DF.Float16_b, DF.Bfp8_b, DF.Bfp4_b])
def test_matmul_on_a_held_weight_gives_the_same_bits(monkeypatch, route, budget, fidelity, fmt):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    monkeypatch.setenv("TVM_BUDA_SLICE_CACHE_MB", budget)
    a = Tensor.from_array(_values((2, 64, 128), seed=2, specials=False), DF.Float16_b)
    weight = _values((96, 128), seed=3, specials=False)
    plain = Tensor.from_array(weight, fmt)
    plain.padded.flags.writeable = False
    transpose = kernels.get_kernel("Transpose")
    want = _matmul(a, transpose([plain], {"dim0": 0, "dim1": 1}, OpNumerics()), fidelity)
    held = transpose([from_value(weight, fmt)], {"dim0": 0, "dim1": 1}, OpNumerics())
    for _ in range(2):                                   # the second call may read kept slices
        assert np.array_equal(_bits(_matmul(a, held, fidelity)), _bits(want))


def test_slices_are_kept_within_the_budget_and_released_with_the_weight(monkeypatch):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "0")
    a = Tensor.from_array(_values((64, 128), specials=False), DF.Float16_b)
    start = derived_budget.held_bytes()
    monkeypatch.setenv("TVM_BUDA_SLICE_CACHE_MB", "0")
    refused = from_value(_values((128, 256), seed=99, specials=False), DF.Float16_b)
    _matmul(a, refused, MF.HiFi3)
    assert not refused.derived() and derived_budget.held_bytes() == start
    monkeypatch.setenv("TVM_BUDA_SLICE_CACHE_MB", "1")
    weights = [from_value(_values((128, 256), seed=s, specials=False), DF.Float16_b) for s in range(6)]
    for weight in weights:
        _matmul(a, weight, MF.HiFi3)
    # the float32 route keeps the widened weight and its low slice, 8 bytes a value: the first 4 fit in 1 MB
    assert [bool(weight.derived()) for weight in weights] == [True] * 4 + [False] * 2
    assert derived_budget.held_bytes() == start + (1 << 20)
    del weights, weight
    gc.collect()
    assert derived_budget.held_bytes() == start


def test_a_block_float_weight_keeps_nothing_widened(monkeypatch):
    """After a run, a Bfp8_b weight's device copy holds its codes and exponents only: no float32
    array made from it survives (its slices are cut again on each call)."""
    monkeypatch.setenv("TVM_BUDA_SLICE_CACHE_MB", "1024")
    param = Parameter(_values((128, 256), specials=False), name="w")
    a = Tensor.from_array(_values((64, 256), specials=False), DF.Float16_b)
    import tracemalloc

    tracemalloc.start()
    try:
        weight = param.device_tensor(DF.Bfp8_b)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2):
            out = _matmul(a, kernels.get_kernel("Transpose")([weight], {"dim0": 0, "dim1": 1}, OpNumerics()), MF.HiFi2)
        del out
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert type(weight) is StoredTensor and weight.derived() is None
    assert weight.nbytes == 256 * 128 * (1 + 1 / 16) and param.device_bytes() == weight.nbytes
    assert grown < 256 * 128 * 4 / 4        # far below one float32 copy of the weight


def test_a_weight_with_a_dim_of_one_stays_compact(monkeypatch):
    """A conv weight [C, K, 1] pads to [C, K, 32], and reshaped to [C, K, 1, 1] (what a 1-D conv
    reads) to [C, K, 32, 32]: neither storage is made unless a kernel reads it."""
    monkeypatch.setattr(stored_tensor, "MIN_ELEMENTS", 1 << 16)           # small: not held as bytes
    value = _values((64, 16, 1))
    param = Parameter(value, name="w")
    weight = param.device_tensor(DF.Float16_b)
    assert type(weight).__name__ == "CompactTensor" and not weight.storage_made
    numerics = OpNumerics()
    reshaped = kept(kernels.get_kernel("Reshape")([weight], {"shape": (64, 16, 1, 1)}, numerics))
    assert not reshaped.storage_made and not weight.storage_made
    assert not reshaped.logical().flags.writeable
    assert np.array_equal(_bits(weight.padded), _bits(Tensor.from_array(value, DF.Float16_b).padded))


def test_an_uncached_weight_costs_one_float32_temporary(monkeypatch):
    """With the slice budget spent, a Float16_b weight's HiFi3 product (float32 route) cuts the low
    slice into the decoded values' own memory once the first GEMM has read them: the same bits,
    and one float32 temporary of the weight at the peak, not two (numpy's allocations traced)."""
    import tracemalloc

    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "0")
    monkeypatch.setenv("TVM_BUDA_SLICE_CACHE_MB", "0")
    a = Tensor.from_array(_values((64, 512), seed=2, specials=False), DF.Float16_b)
    weight = _values((512, 1024), seed=3, specials=False)
    plain = Tensor.from_array(weight, DF.Float16_b)
    plain.padded.flags.writeable = False
    want = _matmul(a, plain, MF.HiFi3)
    held = from_value(weight, DF.Float16_b)
    tracemalloc.start()
    try:
        for _ in range(2):
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
            got = _matmul(a, held, MF.HiFi3)
            peak = tracemalloc.get_traced_memory()[1] - start
            assert np.array_equal(_bits(got), _bits(want))
            assert peak < 1.5 * weight.size * 4, peak
    finally:
        tracemalloc.stop()
    assert held.derived() == {}
