"""`pybuda.op`: the ops a PyBudaModule's forward is written in. Each call runs eagerly on the
simulated device and returns a Tensor.

Every op takes a name first (unique within the module); for compatibility with older PyBuda
code, a leading module argument (`Matmul(self, "mm", a, b)`) is accepted and ignored. Grouped
as in PyBuda's API reference; ops beyond the reference are marked as extensions in each module.
"""

from __future__ import annotations

from .activations import Gelu, GeluDerivative, LeakyRelu, Relu, Sigmoid, Tanh
from .convolutions import AvgPool2d, Conv2d, Conv2dTranspose, MaxPool2d
from .general import (Add, Buffer, Constant, Divide, Identity, Matmul, Multiply, ReduceAvg, ReduceMax, ReduceMin,
                      ReduceSum, Subtract)
from .math import (Abs, Argmax, Clip, Cos, Equal, Erf, Exp, Greater, GreaterEqual, Heaviside, Less, LessEqual, Log,
                   LogicalAnd, LogicalNot, LogicalOr, Max, Min, NotEqual, Pow, Power, Reciprocal, Sin, Sqrt, Where)
from .transformations import (BinaryStack, Broadcast, BroadcastTo, Cast, Concatenate, HSlice, HStack, Index, Pad,
                              Permute, Reshape, Select, Squeeze, Transpose, Unsqueeze, VSlice, VStack)

from . import nn  # noqa: E402  (pybuda.op.nn)

__all__ = [
    # general
    "Add", "Buffer", "Constant", "Divide", "Identity", "Matmul", "Multiply", "ReduceAvg", "ReduceMax", "ReduceMin",
    "ReduceSum", "Subtract",
    # transformations
    "BinaryStack", "Broadcast", "BroadcastTo", "Cast", "Concatenate", "HSlice", "HStack", "Index", "Pad", "Permute",
    "Reshape", "Select", "Squeeze", "Transpose", "Unsqueeze", "VSlice", "VStack",
    # activations
    "Gelu", "GeluDerivative", "LeakyRelu", "Relu", "Sigmoid", "Tanh",
    # math
    "Abs", "Argmax", "Clip", "Cos", "Equal", "Erf", "Exp", "Greater", "GreaterEqual", "Heaviside", "Less",
    "LessEqual", "Log", "LogicalAnd", "LogicalNot", "LogicalOr", "Max", "Min", "NotEqual", "Pow", "Power",
    "Reciprocal", "Sin", "Sqrt", "Where",
    # convolutions
    "AvgPool2d", "Conv2d", "Conv2dTranspose", "MaxPool2d",
    "nn",
]

from . import loss  # noqa: E402  (pybuda.op.loss)
