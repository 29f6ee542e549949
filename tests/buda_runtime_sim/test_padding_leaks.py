"""Tile padding never leaks: on odd shapes (1x3x33x47) every op equals the unpadded math, and every
result's padding region is zero so the next op can rely on it."""

import numpy as np
import pytest
import torch

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.numerics_config import NumericsConfig
from buda_runtime_sim.tensor import unpad

ODD = (1, 3, 33, 47)
RNG = np.random.default_rng(3)
NEGATIVE = -np.abs(RNG.standard_normal(ODD).astype(np.float32)) - 0.5  # a leaked zero would be the max
MIXED = RNG.standard_normal(ODD).astype(np.float32)


@pytest.fixture(autouse=True)
def fp32():
    numerics = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                              math_fidelity=MathFidelity.HiFi4)
    with context.use(context.ExecutionContext(numerics=numerics)):
        yield


def _padding_is_zero(t) -> bool:
    padded = t.padded.copy()
    unpad(padded, t.shape)[...] = 0
    return not np.any(padded)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layernorm(x):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)


def _max_pool(x):
    return torch.nn.functional.max_pool2d(torch.from_numpy(x), 3, 2, 1, ceil_mode=True).numpy()


def _avg_pool(x):
    return torch.nn.functional.avg_pool2d(torch.from_numpy(x), 3, 2, 1, ceil_mode=True,
                                          count_include_pad=False).numpy()


op = pybuda.op
CASES = {
    "reduce_sum_c": (lambda x: op.ReduceSum("r", op.Exp("e", x), -1), lambda x: np.exp(x).sum(-1, keepdims=True)),
    "reduce_sum_r": (lambda x: op.ReduceSum("r", op.Exp("e", x), -2), lambda x: np.exp(x).sum(-2, keepdims=True)),
    "reduce_avg": (lambda x: op.ReduceAvg("r", op.Exp("e", x), -1), lambda x: np.exp(x).mean(-1, keepdims=True)),
    "reduce_max_c": (lambda x: op.ReduceMax("r", x, -1), lambda x: x.max(-1, keepdims=True)),
    "reduce_max_r": (lambda x: op.ReduceMax("r", x, -2), lambda x: x.max(-2, keepdims=True)),
    "softmax_c": (lambda x: op.nn.Softmax("s", x, dim=-1), lambda x: _softmax(x, -1)),
    "softmax_r": (lambda x: op.nn.Softmax("s", x, dim=-2), lambda x: _softmax(x, -2)),
    "layernorm": (lambda x: op.nn.Layernorm("l", x, np.ones(47, np.float32), np.zeros(47, np.float32)), _layernorm),
    "argmax_c": (lambda x: op.Argmax("a", x, dim=-1), lambda x: np.argmax(x, -1)[..., None]),
    "argmax_r": (lambda x: op.Argmax("a", x, dim=-2), lambda x: np.argmax(x, -2)[..., None, :]),
    "max_pool": (lambda x: op.MaxPool2d("p", x, 3, stride=2, padding=1, ceil_mode=True), _max_pool),
    "avg_pool": (lambda x: op.AvgPool2d("p", x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                 _avg_pool),
    "matmul_inner": (lambda x: op.Matmul("m", op.Exp("e", x), op.Exp("e", np.swapaxes(x, -1, -2))),
                     lambda x: np.exp(x) @ np.exp(np.swapaxes(x, -1, -2))),
    "matmul_after_equal": (lambda x: op.Matmul("m", op.Equal("q", x, x), np.ones((47, 5), np.float32)),
                           lambda x: np.full(x.shape[:-1] + (5,), 47.0, np.float32)),
}


@pytest.mark.parametrize("data", [NEGATIVE, MIXED], ids=["negative", "mixed"])
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_odd_shapes_equal_unpadded_math(case, data):
    device, reference = CASES[case]
    out = device(data)
    assert _padding_is_zero(out)
    np.testing.assert_allclose(out.numpy(), reference(data), rtol=3e-3, atol=1e-5)


PADDING_NONZERO_AT_ZERO = {
    "Exp": lambda x: op.Exp("e", x), "Log": lambda x: op.Log("l", x), "Reciprocal": lambda x: op.Reciprocal("r", x),
    "Cos": lambda x: op.Cos("c", x), "Sigmoid": lambda x: op.Sigmoid("s", x), "Equal": lambda x: op.Equal("q", x, x),
    "GreaterEqual": lambda x: op.GreaterEqual("g", x, x), "LogicalNot": lambda x: op.LogicalNot("n", x),
    "Power": lambda x: op.Power("p", x, x), "Divide": lambda x: op.Divide("d", x, x),
    "Add_scalar": lambda x: op.Add("a", x, np.float32(1.0)), "Clip": lambda x: op.Clip("c", x, min=0.5, max=1.0),
    "Relu_max": lambda x: op.Relu("r", x, threshold=1.0, mode="max"), "Pad": lambda x: op.Pad("p", x, (1, 0), value=3.0),
    "Constant": lambda x: op.Constant("k", constant=1.0, shape=(3, 33, 47)),
    "Where": lambda x: op.Where("w", op.Less("l", x, np.float32(0)), np.float32(1.0), x),
    "LogSoftmax": lambda x: op.nn.LogSoftmax("ls", x, dim=-1),
}


@pytest.mark.parametrize("name", PADDING_NONZERO_AT_ZERO, ids=list(PADDING_NONZERO_AT_ZERO))
def test_ops_with_f_of_zero_nonzero_clear_their_padding(name):
    assert _padding_is_zero(PADDING_NONZERO_AT_ZERO[name](np.abs(MIXED) + 0.1))
