"""Elementwise kernels (binary math, comparisons, logic, unary SFPU functions) vs numpy/torch."""

import math

import ml_dtypes
import numpy as np
import pytest
import torch

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.numerics_config import NumericsConfig

RNG = np.random.default_rng(0)
SHAPE = (2, 33, 47)


@pytest.fixture
def exact():
    """Float32 everywhere, HiFi4: results as close to fp32 math as the device gets."""
    numerics = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                              math_fidelity=MathFidelity.HiFi4)
    with context.use(context.ExecutionContext(numerics=numerics)):
        yield


def _data(shape=SHAPE, positive=False):
    x = RNG.standard_normal(shape).astype(np.float32)
    return np.abs(x) + 0.1 if positive else x


BINARY = [
    ("Add", np.add), ("Subtract", np.subtract), ("Max", np.maximum), ("Min", np.minimum),
    ("Heaviside", np.heaviside),
    ("Equal", np.equal), ("NotEqual", np.not_equal), ("Greater", np.greater), ("GreaterEqual", np.greater_equal),
    ("Less", np.less), ("LessEqual", np.less_equal), ("LogicalAnd", np.logical_and), ("LogicalOr", np.logical_or),
]


@pytest.mark.parametrize("op, reference", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("b_shape", [SHAPE, (47,), ()], ids=["same", "row", "scalar"])
def test_binary_ops_match_numpy_with_broadcasting(exact, op, reference, b_shape):
    a = np.round(_data(), 1)  # rounding makes equal values common enough for comparisons
    b = np.round(_data(b_shape), 1) if b_shape else np.float32(0.0)
    a[0, 0, :3] = 0.0
    out = getattr(pybuda.op, op)("op", a, b)
    np.testing.assert_array_equal(out.numpy(), reference(a, b).astype(np.float32))


@pytest.mark.parametrize("fidelity", list(MathFidelity)[:4], ids=lambda f: f.name)
@pytest.mark.parametrize("op", ["Multiply", "Divide"])
@pytest.mark.parametrize("a_shape, b_shape", [(SHAPE, ()), ((), SHAPE), (SHAPE, (47,)), ((47,), SHAPE),
                                              ((2, 1, 47), (33, 1))], ids=["scalar", "scalar-first", "row",
                                                                           "row-first", "both"])
def test_broadcast_multiply_equals_the_multiply_of_materialised_operands(op, fidelity, a_shape, b_shape):
    """A broadcast operand is sliced for the fidelity phases once, not per element: bit for bit the
    same result as the op on operands broadcast beforehand, specials included (Float16_b in/out)."""
    a, b = np.array(_data(a_shape)), np.array(_data(b_shape, positive=op == "Divide"))
    for x in (a, b):
        if x.size >= 4:
            x.reshape(-1)[:4] = [np.inf, -np.inf, np.nan, 0.0]
    full_a, full_b = (np.ascontiguousarray(x) for x in np.broadcast_arrays(a, b))
    numerics = NumericsConfig(math_fidelity=fidelity)
    with context.use(context.ExecutionContext(numerics=numerics)):
        out = getattr(pybuda.op, op)("op", a, b).numpy()
        golden = getattr(pybuda.op, op)("op", full_a, full_b).numpy()
    np.testing.assert_array_equal(out.view(np.uint32), golden.view(np.uint32))


@pytest.mark.parametrize("op, reference", [("Multiply", np.multiply), ("Divide", np.divide)])
def test_multiply_and_divide_go_through_the_fidelity_model(exact, op, reference):
    a, b = _data(), _data(positive=True)
    golden = reference(a, b)
    hifi4 = getattr(pybuda.op, op)("op", a, b).numpy()
    np.testing.assert_allclose(hifi4, golden, rtol=3e-3, atol=1e-6)
    numerics = NumericsConfig(default_df_override=DataFormat.Float32, math_fidelity=MathFidelity.LoFi)
    with context.use(context.ExecutionContext(numerics=numerics)):
        lofi = getattr(pybuda.op, op)("op", a, b).numpy()
    assert np.abs(lofi - golden).max() > np.abs(hifi4 - golden).max()


def test_power_and_pow(exact):
    a, b = _data(positive=True), _data()
    np.testing.assert_allclose(pybuda.op.Power("p", a, b).numpy(), np.power(a, b), rtol=1e-6)
    np.testing.assert_allclose(pybuda.op.Pow("p", a, 3).numpy(), a ** 3, rtol=1e-6)


UNARY = [
    ("Exp", np.exp, False), ("Reciprocal", np.reciprocal, True), ("Sqrt", np.sqrt, True), ("Log", np.log, True),
    ("Abs", np.abs, False), ("Sin", np.sin, False), ("Cos", np.cos, False), ("Tanh", np.tanh, False),
    ("Sigmoid", lambda x: 1 / (1 + np.exp(-x)), False),
    ("Erf", np.vectorize(math.erf), False),
    ("LogicalNot", lambda x: (x == 0), False),
]


@pytest.mark.parametrize("op, reference, positive", UNARY, ids=[u[0] for u in UNARY])
def test_unary_ops_match_numpy(exact, op, reference, positive):
    x = _data(positive=positive)
    x.flat[:5] = 0.0 if not positive else x.flat[:5]
    out = getattr(pybuda.op, op)("op", x).numpy()
    np.testing.assert_allclose(out, reference(x).astype(np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(exact, approximate):
    x = _data()
    golden = torch.nn.functional.gelu(torch.from_numpy(x), approximate=approximate).numpy()
    np.testing.assert_allclose(pybuda.op.Gelu("g", x, approximate=approximate).numpy(), golden, rtol=1e-6)


def test_relu_modes_leaky_relu_and_clip(exact):
    x = _data()
    np.testing.assert_array_equal(pybuda.op.Relu("r", x).numpy(), np.maximum(x, 0))
    np.testing.assert_array_equal(pybuda.op.Relu("r", x, threshold=0.5).numpy(), np.where(x > 0.5, x, 0))
    np.testing.assert_array_equal(pybuda.op.Relu("r", x, mode="max", threshold=0.5).numpy(), np.where(x < 0.5, x, 0))
    np.testing.assert_allclose(pybuda.op.LeakyRelu("l", x, alpha=0.1).numpy(), np.where(x >= 0, x, 0.1 * x))
    np.testing.assert_array_equal(pybuda.op.Clip("c", x, min=-0.5, max=0.25).numpy(), np.clip(x, -0.5, 0.25))


def test_relu_bits_on_special_values(exact):
    """Relu is "x where x > 0, else 0" bit for bit: NaN gives 0, -0 gives +0, denormals stay."""
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 1e-40, -3.0, 2.5],
                        np.float32)
    patterns = np.random.default_rng(7).integers(0, 2**32, size=4096, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([specials, patterns.view(np.float32)]).reshape(1, -1)
    expected = np.where(x > 0, x, np.float32(0))
    np.testing.assert_array_equal(pybuda.op.Relu("r", x).numpy().view(np.uint32), expected.view(np.uint32))


def test_where_broadcasts_all_three_operands(exact):
    condition = (RNG.random((2, 33, 1)) > 0.5).astype(np.float32)
    a, b = _data(), np.float32(-1.0)
    np.testing.assert_array_equal(pybuda.op.Where("w", condition, a, b).numpy(), np.where(condition != 0, a, b))


def test_default_numerics_round_inputs_and_results_to_bfloat16():
    x = _data()
    out = pybuda.op.Exp("e", x).numpy()
    bf16 = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(out, np.exp(bf16).astype(ml_dtypes.bfloat16).astype(np.float32))
