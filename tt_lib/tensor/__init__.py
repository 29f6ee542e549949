"""tt_lib.tensor: tensors with TT-Dispatch's data types and layouts, and the ops that run on them."""

from .core import DataType, Layout, Tensor, tilize, untilize
from .ops import (ReduceOpDim, ReduceOpMath, add, bmm, exp, gelu, layernorm, log, matmul, mul, recip, relu, reduce,
                  reshape, sigmoid, softmax, sqrt, sub, transpose)

__all__ = ["DataType", "Layout", "ReduceOpDim", "ReduceOpMath", "Tensor", "add", "bmm", "exp", "gelu", "layernorm",
           "log", "matmul", "mul", "recip", "reduce", "relu", "reshape", "sigmoid", "softmax", "sqrt", "sub",
           "tilize", "transpose", "untilize"]
