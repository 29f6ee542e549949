"""The bfloat16 route (bf16_gemm.py) computes the same fidelity products as the float32 route:
same slices, float32 sums, one rounding to Float16_b; only the order of the float32 additions may
differ (BLAS leaves it open), which moves a bfloat16 result by at most one unit in rare elements."""

import os
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from buda_runtime_sim import bf16_gemm, kernels
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.dataformat import MathFidelity as MF
from buda_runtime_sim.fidelity import fidelity_matmul
from buda_runtime_sim.formats import quantize
from buda_runtime_sim.numerics_config import OpNumerics
from buda_runtime_sim.tensor import Tensor

FIDELITIES = [MF.LoFi, MF.HiFi2, MF.HiFi3, MF.HiFi4]


def _cpu_flags() -> set[str]:
    """The CPU's feature flags as Linux reports them, read apart from bf16_gemm's torch probes."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        pytest.fail("these route tests read the CPU's flags from /proc/cpuinfo (Linux)")
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _acting_without_bf16() -> bool:
    return os.environ.get("TVM_BUDA_CPU_BF16", "auto").strip() == "0"


def _cpu_multiplies_bf16() -> bool:
    """AVX512-BF16 or AMX: what TVM_BUDA_BF16_GEMM=auto takes the bfloat16 route for."""
    return not _acting_without_bf16() and bool({"avx512_bf16", "amx_bf16"} & _cpu_flags())


def _cpu_convolves_bf16() -> bool:
    """What oneDNN's bfloat16 convolutions need (torch refuses them elsewhere)."""
    flags = _cpu_flags()
    return not _acting_without_bf16() and ({"avx512bw", "avx512vl", "avx512dq"} <= flags or "avx_ne_convert" in flags)


def _route(monkeypatch, on: bool):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "1" if on else "0")


def _ulps_apart(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Distance in bfloat16 units in the last place (both hold bfloat16 values)."""
    bits = [np.asarray(v, np.float32).astype(ml_dtypes.bfloat16).view(np.int16).astype(np.int32) for v in (x, y)]
    signed = [np.where(b < 0, -(b & 0x7FFF), b) for b in bits]
    return np.abs(signed[0] - signed[1])


def _both_routes(monkeypatch, compute):
    _route(monkeypatch, False)
    plain = compute()
    _route(monkeypatch, True)
    return plain, compute()


def _assert_same_products(plain: np.ndarray, fast: np.ndarray):
    assert plain.shape == fast.shape
    apart = _ulps_apart(plain, fast)
    assert apart.max() <= 1                                  # summation order only
    assert np.mean(apart > 0) <= 2e-3


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("fmt_a, fmt_b", [(DF.Float16_b, DF.Float16_b), (DF.Bfp8_b, DF.Bfp8_b),
                                          (DF.Float16_b, DF.Bfp4_b), (None, DF.Float16_b)])
@pytest.mark.parametrize("shape_a, shape_b", [((3, 64, 96), (96, 64)), ((2, 3, 32, 48), (2, 3, 48, 40))])
def test_same_products_as_the_float32_route(monkeypatch, fidelity, fmt_a, fmt_b, shape_a, shape_b):
    rng = np.random.default_rng(0)
    a = quantize(rng.standard_normal(shape_a).astype(np.float32), fmt_a or DF.Float16_b)   # bf16 values, format unsaid
    b = quantize(rng.standard_normal(shape_b).astype(np.float32) * 3, fmt_b)
    plain, fast = _both_routes(monkeypatch, lambda: fidelity_matmul(a, b, fidelity, DF.Float16_b,
                                                                  a_format=fmt_a, b_format=fmt_b, b_cache={}))
    _assert_same_products(plain, fast)
    # the fidelities stay apart on the fast route: HiFi3 is not HiFi4 for bfloat16 operands
    if fidelity == MF.HiFi3 and fmt_a == fmt_b == DF.Float16_b:
        hifi4 = fidelity_matmul(a, b, MF.HiFi4, DF.Float16_b, a_format=fmt_a, b_format=fmt_b)
        assert not np.array_equal(fast, hifi4)


def test_hand_worked_phases_exact(monkeypatch):
    """1.5 (SrcB, lowest bfloat16 bit set) x (1 + 2**-7) (SrcA: bits beyond its high slice): every
    phase product is a distinct power of two, so each fidelity has one exact answer."""
    _route(monkeypatch, True)
    a = np.array([[1 + 2.0**-7]], np.float32)             # SrcB: hi = 1, lo = 2**-7
    b = np.array([[1 + 2.0**-5 + 2.0**-7]], np.float32)   # SrcA: hi = 1, lo = 2**-5 + 2**-7
    hi_hi, lo_hi, hi_lo = 1.0, 2.0**-5 + 2.0**-7, 2.0**-7
    expected = {MF.LoFi: hi_hi, MF.HiFi2: hi_hi + lo_hi, MF.HiFi3: hi_hi + lo_hi + hi_lo}
    for fidelity, value in expected.items():
        out = fidelity_matmul(a, b, fidelity, DF.Float16_b, a_format=DF.Float16_b, b_format=DF.Float16_b)
        assert out[0, 0] == np.float32(ml_dtypes.bfloat16(value)), fidelity


def test_route_taken_only_where_exact(monkeypatch):
    calls = []
    real = bf16_gemm.matmul
    monkeypatch.setattr(bf16_gemm, "matmul", lambda *args: calls.append(1) or real(*args))
    _route(monkeypatch, True)
    rng = np.random.default_rng(1)
    bf16_a = quantize(rng.standard_normal((32, 64)).astype(np.float32), DF.Float16_b)
    fp32_a = rng.standard_normal((32, 64)).astype(np.float32)                 # wider than bfloat16
    b = quantize(rng.standard_normal((64, 32)).astype(np.float32), DF.Float16_b)
    cases = [(bf16_a, MF.HiFi3, DF.Float16_b, True), (bf16_a, MF.HiFi3, DF.Float32, False),
             (bf16_a, MF.HiFi3, DF.Float16, False), (fp32_a, MF.HiFi4, DF.Float16_b, False),
             (fp32_a, MF.HiFi3, DF.Float16_b, False), (fp32_a, MF.LoFi, DF.Float16_b, True),
             (fp32_a, MF.HiFi2, DF.Float16_b, True)]   # LoFi/HiFi2 cut SrcB to 7 significant bits
    for a, fidelity, acc, taken in cases:
        calls.clear()
        fidelity_matmul(a, b, fidelity, acc)
        assert bool(calls) == taken, (fidelity, acc, a is fp32_a)
    _route(monkeypatch, False)
    calls.clear()
    fidelity_matmul(bf16_a, b, MF.HiFi3, DF.Float16_b)
    assert not calls


def test_inf_and_nan_propagate(monkeypatch):
    _route(monkeypatch, True)
    a = np.array([[np.inf, 1.0], [1.0, np.nan]], np.float32)
    b = np.array([[1.0, 0.5], [2.0, 1.0]], np.float32)
    for fidelity in FIDELITIES:
        out = fidelity_matmul(a, b, fidelity, DF.Float16_b, a_format=DF.Float16_b, b_format=DF.Float16_b)
        assert out[0, 0] == np.inf and out[0, 1] == np.inf and np.isnan(out[1]).all()


def test_setting_must_be_known(monkeypatch):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "sometimes")
    with pytest.raises(ValueError, match="TVM_BUDA_BF16_GEMM"):
        fidelity_matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), MF.HiFi3, DF.Float16_b)


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("channel_last", [False, True])
def test_convolution_same_products(monkeypatch, fidelity, channel_last):
    rng = np.random.default_rng(2)
    x = quantize(rng.standard_normal((1, 16, 12, 12)).astype(np.float32), DF.Float16_b)
    w = quantize(rng.standard_normal((24, 16, 3, 3)).astype(np.float32), DF.Float16_b)
    if channel_last:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    numerics = OpNumerics(math_fidelity=fidelity)

    def run():
        weight = Tensor.from_array(w, DF.Float16_b)
        weight.padded.flags.writeable = False
        op = kernels.get_kernel("Conv2d")
        out = op([Tensor.from_array(x, DF.Float16_b), weight], {"padding": 1, "channel_last": channel_last}, numerics)
        return out.logical()

    before = bf16_gemm.bf16_products()
    plain = run()
    assert bf16_gemm.bf16_products() == before                    # TVM_BUDA_BF16_GEMM=0: float32
    _route(monkeypatch, True)
    fast = run()
    # with TVM_BUDA_BF16_GEMM=1 the bfloat16 route runs where the CPU has oneDNN's bfloat16 convolutions;
    # elsewhere (AVX2 only) the float32 route does, and then gives the very same bits
    assert (bf16_gemm.bf16_products() > before) == _cpu_convolves_bf16()
    _assert_same_products(plain, fast)
    if not _cpu_convolves_bf16():
        np.testing.assert_array_equal(plain, fast)


def test_route_follows_the_cpu(monkeypatch):
    """bf16_gemm's probes agree with the CPU's own flags (or with TVM_BUDA_CPU_BF16=0)."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "auto")
    assert bf16_gemm._hardware_bf16() == _cpu_multiplies_bf16()
    assert bf16_gemm._hardware_bf16_convolution() == _cpu_convolves_bf16()
    assert bf16_gemm.route().startswith("bfloat16" if _cpu_multiplies_bf16() else "float32")
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "1")
    assert bf16_gemm.enabled(1) and bf16_gemm.route().startswith("bfloat16")
    assert bf16_gemm.enabled(1, convolution=True) == _cpu_convolves_bf16()


def test_acting_without_bf16_instructions(monkeypatch):
    """TVM_BUDA_CPU_BF16=0: on any machine, the routes an AVX2-only CPU takes."""
    monkeypatch.setenv("TVM_BUDA_CPU_BF16", "0")
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "auto")
    assert not bf16_gemm.enabled(bf16_gemm.MIN_MATRIX) and not bf16_gemm.enabled(bf16_gemm.MIN_MATRIX, True)
    assert bf16_gemm.route().startswith("float32") and "TVM_BUDA_CPU_BF16=0" in bf16_gemm.route()
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "1")
    assert bf16_gemm.enabled(1)                              # matmuls: torch multiplies bfloat16 anywhere
    assert not bf16_gemm.enabled(1, convolution=True)        # convolutions: not without oneDNN's kernels
    monkeypatch.setenv("TVM_BUDA_CPU_BF16", "maybe")
    with pytest.raises(ValueError, match="TVM_BUDA_CPU_BF16"):
        bf16_gemm.enabled(1, convolution=True)


def test_bf16_products_count_what_ran(monkeypatch):
    rng = np.random.default_rng(4)
    a = quantize(rng.standard_normal((32, 64)).astype(np.float32), DF.Float16_b)
    b = quantize(rng.standard_normal((64, 32)).astype(np.float32), DF.Float16_b)
    for on, added in ((False, 0), (True, 1)):
        _route(monkeypatch, on)
        before = bf16_gemm.bf16_products()
        fidelity_matmul(a, b, MF.LoFi, DF.Float16_b, a_format=DF.Float16_b, b_format=DF.Float16_b)
        assert bf16_gemm.bf16_products() - before == added


def test_auto_route_on_bf16_hardware_for_matrices_large_enough(monkeypatch):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "auto")
    hardware = _cpu_multiplies_bf16()
    assert bf16_gemm.enabled(bf16_gemm.MIN_MATRIX) == hardware
    assert not bf16_gemm.enabled(bf16_gemm.MIN_MATRIX - 1)     # small: float32 is faster
    assert bf16_gemm.enabled(bf16_gemm.MIN_BATCHED_MATRIX, batched=True) == hardware   # attention's
    assert not bf16_gemm.enabled(bf16_gemm.MIN_BATCHED_MATRIX - 1, batched=True)
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "1")
    assert bf16_gemm.enabled(1)


def test_route_does_not_depend_on_rows_or_batch(monkeypatch):
    """A batch split (data parallel over chips) takes the whole batch's route and gives its bits."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "auto")
    rng = np.random.default_rng(3)
    a = quantize(rng.standard_normal((8, 64, 128)).astype(np.float32), DF.Float16_b)
    b = quantize(rng.standard_normal((128, 96)).astype(np.float32), DF.Float16_b)
    whole = fidelity_matmul(a, b, MF.HiFi3, DF.Float16_b, a_format=DF.Float16_b, b_format=DF.Float16_b)
    halves = [fidelity_matmul(part, b, MF.HiFi3, DF.Float16_b, a_format=DF.Float16_b, b_format=DF.Float16_b)
              for part in (a[:4], a[4:])]
    np.testing.assert_array_equal(whole, np.concatenate(halves))


def test_setting_fixed_reads_the_environment_once_per_block(monkeypatch):
    """A device program reads TVM_BUDA_BF16_GEMM once, at its start (bf16_gemm.setting_fixed);
    outside such a block every call reads it."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "1")
    with bf16_gemm.setting_fixed():
        monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "0")
        assert bf16_gemm.enabled(16)                  # the value at the block's start
        with bf16_gemm.setting_fixed():               # a nested block takes the environment now
            assert not bf16_gemm.enabled(16)
        assert bf16_gemm.enabled(16)                  # and gives the outer block its value back
    assert not bf16_gemm.enabled(16)                  # outside: read every call
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "sometimes")
    with pytest.raises(ValueError, match="TVM_BUDA_BF16_GEMM"):
        with bf16_gemm.setting_fixed():
            pass


@pytest.mark.parametrize("layout", ["plain", "read-only", "flipped", "read-only flipped", "transposed"])
def test_torch_view_shares_memory_and_stays_quiet(layout):
    """torch_view gives the values without a warning (read-only arrays included: torch warns about
    them once per process, inside torch_view's first block, which is then no longer entered) and
    shares the array's memory wherever torch can (not negative strides: those are copied)."""
    base = np.arange(96, dtype=np.float32).reshape(8, 12)
    x = {"plain": base, "read-only": base.copy(), "flipped": base[::-1], "read-only flipped": base.copy()[:, ::-1],
         "transposed": base.T}[layout]
    if "read-only" in layout:
        x.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        views = [bf16_gemm.torch_view(x) for _ in range(3)]
    for view in views:
        np.testing.assert_array_equal(view.numpy(), x)
        assert (view.data_ptr() == x.ctypes.data) == ("flipped" not in layout)
    if "read-only" in layout:
        assert bf16_gemm._read_only_quiet          # the later calls skipped the warnings block
