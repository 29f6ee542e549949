"""The HiFi3 bfloat16 fast paths (fidelity_bf16.py) give the general path's bits: the same float32
words, not merely close values, on random operands, on operands holding specials (inf, NaN, -0,
denormals, values that overflow), on both GEMM routes, with and without a weight's slice cache."""

import ml_dtypes
import numpy as np
import pytest

from buda_runtime_sim import fidelity_bf16
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.dataformat import MathFidelity as MF
from buda_runtime_sim.fidelity import fidelity_matmul, fidelity_multiply

BF16 = DF.Float16_b
# kernels call these under float_errors.ignored(): overflow and inf - inf are values here, not errors
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
# bfloat16 values (what a Float16_b operand holds): infinities, NaNs, zeros, the largest finite
# value (products overflow), denormals and the smallest normal
_SPECIALS = np.array([np.inf, -np.inf, np.nan, -np.nan, -0.0, 0.0, 3.3895e38, -3.3895e38,
                      1e-39, -1e-39, 9.2e-41, 1.1754944e-38], np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def _bf16_values(rng, shape, scale=1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(ml_dtypes.bfloat16).astype(np.float32)


def _random_bits(rng, shape) -> np.ndarray:
    """Any bfloat16 bit pattern (specials and denormals included) as float32."""
    return rng.integers(0, 1 << 16, shape, dtype=np.uint32).astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)


def _with_specials(rng, x: np.ndarray, count: int = 3) -> np.ndarray:
    x = x.copy()
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, count, replace=False)] = rng.choice(_SPECIALS, count)
    return x


def _general(monkeypatch, compute):
    """`compute()` with the fast paths switched off."""
    with monkeypatch.context() as patch:
        patch.setattr(fidelity_bf16, "applies", lambda *formats: False)
        return compute()


def _assert_same_bits(fast: np.ndarray, general: np.ndarray):
    assert fast.dtype == general.dtype == np.float32 and fast.shape == general.shape
    np.testing.assert_array_equal(fast.view(np.uint32), general.view(np.uint32))


MATMUL_SHAPES = [((128, 64), (64, 64)), ((4, 32, 64), (64, 64)), ((8, 32, 32), (8, 32, 32)),
                 ((64, 128), (128, 64)), ((128, 64), (64, 256)), ((2, 32, 64), (1, 64, 160)),
                 ((32, 96), (96, 96))]


@pytest.mark.parametrize("route", ["0", "1", "auto"])
@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES)
@pytest.mark.parametrize("weight", [False, True])
def test_matmul_same_bits(monkeypatch, route, shape_a, shape_b, weight):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    rng = np.random.default_rng(len(shape_a) * 100 + shape_b[-1])
    a, b = _bf16_values(rng, shape_a), _bf16_values(rng, shape_b, 3.0)

    def run(b_cache):
        return fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16, b_cache=b_cache)

    general = _general(monkeypatch, lambda: run({} if weight else None))
    assert fidelity_bf16.matmul(a, b, BF16, {} if weight else None) is not None   # the fast path ran
    _assert_same_bits(run({} if weight else None), general)
    if weight:                   # slices cached by either path serve the other
        cache = {}
        _general(monkeypatch, lambda: run(cache))
        _assert_same_bits(run(cache), general)
        cache = {}
        run(cache)
        _assert_same_bits(_general(monkeypatch, lambda: run(cache)), general)


@pytest.mark.parametrize("route", ["0", "1"])
@pytest.mark.parametrize("layout", ["transposed", "broadcast", "sliced", "flipped", "read-only"])
def test_matmul_left_operand_views(monkeypatch, route, layout):
    """Left operands as views of any strides (negative included) and read-only arrays: both routes
    read them where they are."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    rng = np.random.default_rng(11)
    base = _bf16_values(rng, (128, 96))
    read_only = base.copy()
    read_only.flags.writeable = False
    a = {"transposed": base.T, "broadcast": np.broadcast_to(base[:1], (64, 96)), "sliced": base[::2, 1:65],
         "flipped": base[::-1, ::-1], "read-only": read_only}[layout]
    b = _bf16_values(rng, (a.shape[-1], 160), 3.0)
    fast = fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16)
    assert fidelity_bf16.matmul(a, b, BF16, None) is not None
    _assert_same_bits(fast, _general(monkeypatch, lambda: fidelity_matmul(a, b, MF.HiFi3, BF16,
                                                                          a_format=BF16, b_format=BF16)))


@pytest.mark.parametrize("route", ["0", "1"])
@pytest.mark.parametrize("shape_a, shape_b", [((128, 64), (64, 64)), ((64, 128), (128, 96))])
@pytest.mark.parametrize("where", ["a", "b", "both"])
def test_matmul_specials_take_the_general_path(monkeypatch, route, shape_a, shape_b, where):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    rng = np.random.default_rng(7)
    a, b = _bf16_values(rng, shape_a), _bf16_values(rng, shape_b)
    if where in ("a", "both"):
        a = _with_specials(rng, a)
    if where in ("b", "both"):
        b = _with_specials(rng, b)
    for cache in (None, {}):
        fast = fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16, b_cache=cache)
        general = _general(monkeypatch, lambda: fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16))
        _assert_same_bits(fast, general)


@pytest.mark.parametrize("route", ["0", "1"])
def test_matmul_random_bit_patterns(monkeypatch, route):
    """Every bfloat16 pattern, denormals and specials included, and operands that overflow."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    rng = np.random.default_rng(3)
    for _ in range(4):
        a, b = _random_bits(rng, (64, 96)), _random_bits(rng, (96, 64))
        fast = fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16)
        _assert_same_bits(fast, _general(monkeypatch, lambda: fidelity_matmul(a, b, MF.HiFi3, BF16,
                                                                              a_format=BF16, b_format=BF16)))
    tiny = np.full((32, 32), 1e-39, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)   # denormal products
    fast = fidelity_matmul(tiny, tiny, MF.HiFi3, BF16, a_format=BF16, b_format=BF16)
    _assert_same_bits(fast, _general(monkeypatch, lambda: fidelity_matmul(tiny, tiny, MF.HiFi3, BF16,
                                                                          a_format=BF16, b_format=BF16)))


def _finite_bits(rng, shape) -> np.ndarray:
    """Finite bfloat16 patterns: any sign and mantissa, exponents from denormal to 2**12 (no overflow)."""
    sign = rng.integers(0, 2, shape, dtype=np.uint32) << 15
    exponent = rng.integers(0, 127 + 12, shape, dtype=np.uint32) << 7
    return (sign | exponent | rng.integers(0, 128, shape, dtype=np.uint32)).astype(np.uint16).view(
        ml_dtypes.bfloat16).astype(np.float32)


@pytest.mark.parametrize("route", ["0", "1"])
@pytest.mark.parametrize("weight", [False, True])
def test_matmul_finite_bit_patterns_take_the_fast_path(monkeypatch, route, weight):
    """Denormals, zeros of both signs and every mantissa, with the fast path running (not declining)."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    rng = np.random.default_rng(13)
    a, b = _finite_bits(rng, (64, 160)), _finite_bits(rng, (160, 96))
    assert fidelity_bf16.matmul(a, b, BF16, {} if weight else None) is not None
    fast = fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16, b_cache={} if weight else None)
    _assert_same_bits(fast, _general(monkeypatch, lambda: fidelity_matmul(a, b, MF.HiFi3, BF16,
                                                                          a_format=BF16, b_format=BF16)))


def test_multiply_finite_bit_patterns_take_the_fast_path(monkeypatch):
    rng = np.random.default_rng(17)
    a, b = _finite_bits(rng, (4, 32, 64)), _finite_bits(rng, (4, 32, 64))
    assert fidelity_bf16.multiply(a, b) is not None
    _assert_same_bits(fidelity_multiply(a, b, MF.HiFi3, a_format=BF16, b_format=BF16),
                      _general(monkeypatch, lambda: fidelity_multiply(a, b, MF.HiFi3, a_format=BF16, b_format=BF16)))


@pytest.mark.parametrize("route", ["0", "1"])
def test_matmul_zero_low_slices(monkeypatch, route):
    """Operands whose low slices are all zero (few mantissa bits): the general path drops a term."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    rng = np.random.default_rng(5)
    coarse = lambda shape: rng.integers(-8, 8, shape).astype(np.float32) * np.float32(0.25)
    for a, b in [(coarse((64, 96)), _bf16_values(rng, (96, 96))), (_bf16_values(rng, (64, 96)), coarse((96, 96))),
                 (coarse((64, 96)), coarse((96, 96)))]:
        for cache in (None, {}):
            fast = fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16, b_cache=cache)
            _assert_same_bits(fast, _general(monkeypatch, lambda: fidelity_matmul(a, b, MF.HiFi3, BF16,
                                                                                  a_format=BF16, b_format=BF16)))


MULTIPLY_SHAPES = [((4, 32, 64), (4, 32, 64)), ((4, 32, 64), (64,)), ((4, 32, 1), (4, 32, 64)),
                   ((4, 32, 256), ()), ((), (4, 2, 32, 32)), ((), ()), ((1,), (32, 32))]


@pytest.mark.parametrize("shape_a, shape_b", MULTIPLY_SHAPES)
@pytest.mark.parametrize("values", ["normal", "specials", "bits"])
def test_multiply_same_bits(monkeypatch, shape_a, shape_b, values):
    rng = np.random.default_rng(11)
    if values == "bits":
        a, b = _random_bits(rng, shape_a), _random_bits(rng, shape_b)
    else:
        a, b = _bf16_values(rng, shape_a, 4.0), _bf16_values(rng, shape_b, 0.5)
        if values == "specials":
            a = _with_specials(rng, a, min(3, a.size))
    fast = fidelity_multiply(a, b, MF.HiFi3, a_format=BF16, b_format=BF16)
    general = _general(monkeypatch, lambda: fidelity_multiply(a, b, MF.HiFi3, a_format=BF16, b_format=BF16))
    _assert_same_bits(np.asarray(fast), np.asarray(general))
    if values == "normal":
        assert fidelity_bf16.multiply(a, b) is not None                  # the fast path ran
    if values == "specials" and not np.isfinite(a).all():
        assert fidelity_bf16.multiply(a, b) is None                      # ... and declined here


def test_multiply_is_hifi3_not_hifi4():
    """The fast path keeps HiFi3's dropped lo x lo term (the fidelities stay apart)."""
    rng = np.random.default_rng(2)
    a, b = _bf16_values(rng, (64, 64)), _bf16_values(rng, (64, 64))
    hifi3 = fidelity_multiply(a, b, MF.HiFi3, a_format=BF16, b_format=BF16)
    assert not np.array_equal(hifi3, fidelity_multiply(a, b, MF.HiFi4, a_format=BF16, b_format=BF16))


def test_applies_only_to_bfloat16_operands():
    assert fidelity_bf16.applies(BF16, BF16)
    assert not fidelity_bf16.applies(BF16, None)
    assert not fidelity_bf16.applies(DF.Bfp8_b, BF16)
    assert not fidelity_bf16.applies(DF.Float32, DF.Float32)


@pytest.mark.parametrize("route", ["0", "1"])
def test_weight_slices_kept_only_once_proven_finite(monkeypatch, route):
    """The fast path cuts a weight's slices without a finiteness check and keeps them in its cache
    only after a finite, non-empty result (which proves every weight element finite): a weight with
    specials, first met by an empty product, leaves its slices to the general path."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    rng = np.random.default_rng(19)
    a = _bf16_values(rng, (64, 128))
    for b in (_bf16_values(rng, (128, 128)), _with_specials(rng, _bf16_values(rng, (128, 128)))):
        finite = bool(np.isfinite(b).all())
        cache = {}
        empty = fidelity_matmul(a[:0], b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16, b_cache=cache)
        assert empty.shape == (0, 128) and not cache                       # an empty result proves nothing
        got = fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16, b_cache=cache)
        assert cache and (fidelity_bf16.matmul(a, b, BF16, None) is not None) == finite
        _assert_same_bits(got, _general(monkeypatch, lambda: fidelity_matmul(a, b, MF.HiFi3, BF16,
                                                                             a_format=BF16, b_format=BF16)))
        _assert_same_bits(fidelity_matmul(a, b, MF.HiFi3, BF16, a_format=BF16, b_format=BF16, b_cache=cache), got)


def _transposed_layout(x: np.ndarray) -> np.ndarray:
    """The same values with the last two dims stored transposed (a transpose op's output view)."""
    return np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)


@pytest.mark.parametrize("route", ["0", "1"])
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("shape_a, shape_b", [((64, 128), (128, 64)), ((256, 128), (128, 64)),
                                              ((8, 32, 32), (8, 32, 32)), ((128, 64), (64, 256))])
def test_matmul_bits_do_not_depend_on_operand_layout(monkeypatch, route, fast, shape_a, shape_b):
    """Both paths cut low slices in their operand's memory order (one contiguous pass, not a
    strided one into C order), so a transposed operand's slices reach the GEMMs transposed too:
    the bits must be those of contiguous operands (BLAS packs either layout into the same panels;
    this pins that for the installed BLAS)."""
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", route)
    rng = np.random.default_rng(23)
    a, b = _bf16_values(rng, shape_a), _bf16_values(rng, shape_b, 3.0)

    def run(x, y):
        compute = lambda: fidelity_matmul(x, y, MF.HiFi3, BF16, a_format=BF16, b_format=BF16)
        return compute() if fast else _general(monkeypatch, compute)

    contiguous = run(a, b)
    for x, y in [(_transposed_layout(a), b), (a, _transposed_layout(b)), (_transposed_layout(a), _transposed_layout(b))]:
        _assert_same_bits(run(x, y), contiguous)
