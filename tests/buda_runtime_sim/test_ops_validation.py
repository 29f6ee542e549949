"""Misuse of an op fails early with an error naming the op type, the op name and the argument."""

import numpy as np
import pytest

import pybuda
from buda_runtime_sim.kernels import KERNELS, OpArgumentError

X = np.ones((1, 3, 8, 8), np.float32)
W = np.ones((4, 3, 3, 3), np.float32)

MISUSES = [
    (lambda: pybuda.op.Relu("r", X, mode="mid"), "Relu 'r': mode"),
    (lambda: pybuda.op.Gelu("g", X, approximate="fast"), "Gelu 'g': approximate"),
    (lambda: pybuda.op.ReduceSum("rs", X, 4), "ReduceSum 'rs': dim"),
    (lambda: pybuda.op.ReduceAvg("ra", X, 1.5), "ReduceAvg 'ra': dim"),
    (lambda: pybuda.op.nn.Softmax("sm", X, dim=-5), "Softmax 'sm': dim"),
    (lambda: pybuda.op.nn.Layernorm("ln", X, np.ones(3), np.ones(8)), "Layernorm 'ln': weights"),
    (lambda: pybuda.op.nn.Layernorm("ln", X, np.ones(8), np.ones(8), epsilon=-1), "Layernorm 'ln': epsilon"),
    (lambda: pybuda.op.Matmul("mm", X, W), "Matmul 'mm': operandB"),
    (lambda: pybuda.op.Matmul("mm", X, np.ones((8, 2)), np.ones(3)), "Matmul 'mm': bias"),
    (lambda: pybuda.op.Conv2d("c", X, W, stride=0), "Conv2d 'c': stride"),
    (lambda: pybuda.op.Conv2d("c", X, W, padding="full"), "Conv2d 'c': padding"),
    (lambda: pybuda.op.Conv2d("c", X, W, groups=2), "Conv2d 'c': weights"),
    (lambda: pybuda.op.Conv2d("c", X, W, np.ones(5)), "Conv2d 'c': bias"),
    (lambda: pybuda.op.Conv2d("c", X, [W]), "Conv2d 'c': weights"),
    (lambda: pybuda.op.MaxPool2d("mp", X, 2, return_indices=True), "MaxPool2d 'mp': return_indices"),
    (lambda: pybuda.op.MaxPool2d("mp", X, 20, padding=0), "MaxPool2d 'mp': kernel_size"),
    (lambda: pybuda.op.AvgPool2d("ap", X, 2, divisor_override=0), "AvgPool2d 'ap': divisor_override"),
    (lambda: pybuda.op.Clip("cl", X, min=1.0, max=0.0), "Clip 'cl': min"),
    (lambda: pybuda.op.Reshape("rs", X, (5, 5)), "Reshape 'rs': shape"),
    (lambda: pybuda.op.Transpose("t", X, 0, 4), "Transpose 't': dim1"),
    (lambda: pybuda.op.Squeeze("sq", X, 1), "Squeeze 'sq': dim"),
    (lambda: pybuda.op.Index("ix", X, -1, 0, 4, 0), "Index 'ix': stride"),
    (lambda: pybuda.op.Select("se", X, -1, (6, 4)), "Select 'se': index"),
    (lambda: pybuda.op.HSlice("hs", X, 3), "HSlice 'hs': slices"),
    (lambda: pybuda.op.VStack("vs", X, 2), "VStack 'vs': slices"),
    (lambda: pybuda.op.Pad("p", X, (1, 2, 3)), "Pad 'p': pad"),
    (lambda: pybuda.op.Pad("p", X, (1, 1), mode="wrap"), "Pad 'p': mode"),
    (lambda: pybuda.op.Concatenate("cat", X, W, axis=1), "Concatenate 'cat': operands"),
    (lambda: pybuda.op.BinaryStack("b", X, W, dim=0), "BinaryStack 'b': operandB"),
    (lambda: pybuda.op.Broadcast("b", X, 1, 5), "Broadcast 'b': dim"),
    (lambda: pybuda.op.Cast("c", X, "int64"), "Cast 'c': dtype"),
    (lambda: pybuda.op.Constant("k", constant="one"), "Constant 'k': constant"),
]


@pytest.mark.parametrize("call, prefix", MISUSES, ids=[m[1].split(":")[0] + "-" + m[1].split(": ")[1] for m in MISUSES])
def test_misuse_names_op_and_argument(call, prefix):
    with pytest.raises(OpArgumentError) as info:
        call()
    assert str(info.value).startswith(prefix), str(info.value)


def test_op_name_must_be_a_string():
    with pytest.raises(TypeError, match="Add: the first argument must be the op name"):
        pybuda.op.Add(X, X, X)


def test_old_style_leading_module_argument_is_accepted():
    module = pybuda.PyBudaModule("m")
    assert pybuda.op.Relu(module, "r", X, threshold=0.5).shape == X.shape


def test_every_public_op_has_a_kernel():
    public = set(pybuda.op.__all__) - {"nn"} | {"Softmax", "LogSoftmax", "Layernorm"}
    assert public <= set(KERNELS), public - set(KERNELS)
