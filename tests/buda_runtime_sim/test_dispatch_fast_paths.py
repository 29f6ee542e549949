"""The op path's shortcuts (op/dispatch.py, op/validate.py, numerics_config.py, tensor.py,
kernels/tm.py) answer exactly what the general code they skip would: the numerics an op resolves
to after its configuration changes, consteval keys, validated arguments and tensors."""

import copy

import numpy as np
import pytest

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim import numerics_config as nc
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.dataformat import MathFidelity
from buda_runtime_sim.kernels import KERNELS, OpArgumentError
from buda_runtime_sim.module import Parameter
from buda_runtime_sim.numerics_config import MixedPrecisionRule, NumericsConfig
from buda_runtime_sim.op import dispatch
from buda_runtime_sim.tensor import TILE_DIM, Tensor, pad, unpad


def _resolved_fresh(config: NumericsConfig, op_type: str, name: str):
    """What a configuration with the same fields, never asked before, resolves to."""
    return NumericsConfig(config.default_df_override, config.accumulate_df, config.math_fidelity,
                          config.fp32_fallback, list(config.rules)).resolve(op_type, name)


def test_resolve_follows_changes_made_through_a_shared_rules_list_and_a_shallow_copy():
    rules = []
    config = NumericsConfig(rules=rules)
    before = config.resolve("Matmul", "mm")
    rules.append(MixedPrecisionRule(op_type="Matmul", output_df=DF.Bfp8_b))   # the caller's own list
    assert config.resolve("Matmul", "mm").output_df == DF.Bfp8_b
    rules[0] = MixedPrecisionRule(op_type="Matmul", output_df=DF.Float32)    # replaced, same length
    assert config.resolve("Matmul", "mm").output_df == DF.Float32
    twin = copy.copy(config)             # shares the cached answers until one of them changes
    twin.math_fidelity = MathFidelity.LoFi
    assert twin.resolve("Matmul", "mm").math_fidelity == MathFidelity.LoFi
    assert config.resolve("Matmul", "mm").math_fidelity == MathFidelity.HiFi3
    rules.clear()
    assert config.resolve("Matmul", "mm") == before
    for c in (config, twin):
        assert c.resolve("Matmul", "mm") == _resolved_fresh(c, "Matmul", "mm")


def test_resolve_stays_right_when_its_cache_fills(monkeypatch):
    monkeypatch.setattr(nc, "_RESOLVED_MAX", 3)
    config = NumericsConfig(rules=[MixedPrecisionRule(name_regex="a.*", output_df=DF.Bfp8_b)])
    names = [f"{p}{i}" for i in range(5) for p in "ab"]
    for name in names * 2:
        assert config.resolve("Add", name) == _resolved_fresh(config, "Add", name)
    assert len(config._resolved) <= 3


def test_an_op_sees_a_configuration_changed_between_ops():
    """run_op reads the cached answer itself: a field assigned or a rule appended mid-program counts."""
    config = NumericsConfig()
    ctx = context.ExecutionContext(numerics=config, record_trace=True)
    x = Tensor.from_array(np.ones((32, 32), np.float32))
    with context.use(ctx):
        pybuda.op.Add("add", x, x)
        config.default_df_override = DF.Float32
        pybuda.op.Add("add", x, x)
        config.rules.append(MixedPrecisionRule(op_type="Add", output_df=DF.Bfp8_b))
        pybuda.op.Add("add", x, x)
    assert [r.numerics.output_df for r in ctx.trace] == [DF.Float16_b, DF.Float32, DF.Bfp8_b]


ATTRS = [{"dim0": 0, "dim1": 1}, {"dim0": False, "dim1": True}, {"dim0": 0.0, "dim1": 1}, {"dim0": -0.0, "dim1": 1},
         {"shape": (64,)}, {"shape": (64.0,)}, {"shape": (True,)}, {"shape": (np.int64(64),)}, {"dim1": 1, "dim0": 0},
         {"mode": "min", "x": None}, {"v": float("nan")}, {"axes": [1, 0]}, {}, {"shape": ()}]


def test_consteval_attribute_text_is_the_sorted_repr():
    """Kept per attribute items, yet never confused across equal values of other types (0, False,
    0.0, -0.0): device images store this text and rebuild keys from it."""
    for attrs in ATTRS * 2:
        assert dispatch._attrs_repr(attrs) == repr(sorted(attrs.items()))


def test_consteval_slot_builds_the_key_images_rebuild():
    w, b = Parameter(np.ones((4, 8), np.float32), name="w"), Parameter(np.ones(8, np.float32), name="b")
    w.set_value(np.full((4, 8), 2, np.float32))
    numerics = NumericsConfig().resolve("Transpose", "t")
    const = pybuda.PyBudaModule("m")
    const.add_constant("c")
    const.set_constant("c", np.ones(3, np.float32))
    inputs = [w, const.get_constant("c"), b]
    cache, key = dispatch._consteval_slot("Transpose", "t", inputs, {"dim0": 0, "dim1": 1}, numerics)
    assert cache is w.consteval
    assert key == dispatch.consteval_key("Transpose", "t", repr(sorted({"dim0": 0, "dim1": 1}.items())), numerics, inputs)
    assert dispatch._consteval_slot("Transpose", "t", [w, 1.0], {}, numerics) == (None, None)


def test_tensor_of_matches_the_constructor():
    padded = np.zeros((2, 32, 32), np.float32)
    made, full = Tensor.of(padded, (2, 5, 7), DF.Bfp8_b), Tensor(padded, (2, 5, 7), DF.Bfp8_b)
    assert [getattr(made, f) for f in Tensor.__slots__] == [getattr(full, f) for f in Tensor.__slots__]
    assert Tensor.of(padded, (2, 5, 7), 6).data_format is DF.Bfp8_b
    shape = Tensor(padded, (np.int64(2), True, 7)).shape          # other ints still become Python ints
    assert shape == (2, 1, 7) and all(type(d) is int for d in shape)


@pytest.mark.parametrize("shape", [(), (1,), (5,), (64,), (0,), (3, 5), (32, 64), (33, 1), (2, 3, 33, 31), (4, 0, 5),
                                   (2, 32, 64)])
def test_pad_and_unpad_round_trip_through_zeroed_tiles(shape):
    values = np.arange(1, np.prod(shape, dtype=int) + 1, dtype=np.float32).reshape(shape)
    two_d = (1,) * max(0, 2 - len(shape)) + shape
    expected = np.zeros(two_d[:-2] + tuple(-(-d // TILE_DIM) * TILE_DIM for d in two_d[-2:]), np.float32)
    expected[..., :two_d[-2], :two_d[-1]] = values.reshape(two_d)
    padded = pad(values)
    assert padded.flags.c_contiguous and padded.dtype == np.float32
    np.testing.assert_array_equal(padded, expected)
    np.testing.assert_array_equal(unpad(padded, shape), values)
    np.testing.assert_array_equal(Tensor(padded, shape).logical(), values)
    np.testing.assert_array_equal(unpad(padded, list(shape)), values)


def _run(op, *args, **kwargs):
    with context.use(context.ExecutionContext(numerics=NumericsConfig(default_df_override=DF.Float32))):
        return op(*args, **kwargs)


@pytest.mark.parametrize("source, target", [((4, 32, 64), (128, 64)), ((128, 64), (4, 32, 2, 32)), ((4, 32, 64), (-1, 64)),
                                            ((4, 3, 64), (12, 64)), ((4, 32, 64), (4, 2048)), ((64,), (1, 64)),
                                            ((2, 3), (np.int64(3), 2)), ((2, 3), [6])])
def test_reshape_gives_numpys_values(source, target):
    values = np.random.default_rng(0).standard_normal(source).astype(np.float32)
    out = _run(pybuda.op.Reshape, "r", Tensor.from_array(values), target)
    np.testing.assert_array_equal(out.numpy(), values.reshape(tuple(int(d) for d in target)))
    assert all(type(d) is int for d in out.shape)


def test_reshape_and_transpose_errors_are_the_general_paths():
    x = Tensor.from_array(np.ones((4, 32, 64), np.float32))
    cases = [(lambda: _run(pybuda.op.Reshape, "r", x, (5, 5)), "Reshape 'r': shape (5, 5) does not hold the 8192 values"),
             (lambda: _run(pybuda.op.Reshape, "r", x, (0, 64)), "Reshape 'r': shape must have positive dims"),
             (lambda: _run(pybuda.op.Reshape, "r", x, (-1, -1)), "Reshape 'r': shape must have positive dims"),
             (lambda: _run(pybuda.op.Reshape, "r", x, (True, 8192)), "Reshape 'r': shape must be an int, got True"),
             (lambda: _run(pybuda.op.Transpose, "t", x, True, 1), "Transpose 't': dim0 must be an int, got True"),
             (lambda: _run(pybuda.op.Transpose, "t", x, 0, -4), "Transpose 't': dim1 must be in [-3, 2]"),
             (lambda: _run(pybuda.op.ReduceSum, "s", x, 0, keep_dim=2), "ReduceSum 's': keep_dim must be True or False")]
    for call, message in cases:
        with pytest.raises(OpArgumentError) as info:
            call()
        assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, -2), (1, 2), (np.int64(2), 1), (0, 2)])
def test_transpose_gives_numpys_values(dims):
    values = np.random.default_rng(1).standard_normal((4, 32, 64)).astype(np.float32)
    out = _run(pybuda.op.Transpose, "t", Tensor.from_array(values), *dims)
    np.testing.assert_array_equal(out.numpy(), np.swapaxes(values, int(dims[0]), int(dims[1])))


def test_a_patched_kernel_is_the_one_run(monkeypatch):
    """run_op reads the kernel table at every call (tests patch it)."""
    calls = []
    original = KERNELS["Reshape"]
    monkeypatch.setitem(KERNELS, "Reshape", lambda *a: calls.append(a[1]) or original(*a))
    _run(pybuda.op.Reshape, "r", Tensor.from_array(np.ones((2, 3), np.float32)), (3, 2))
    assert calls == [{"shape": (3, 2)}]
