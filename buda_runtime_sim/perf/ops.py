"""What the perf model reads: ops with static shapes and numerics, weights, host transfers.

Anything can produce an OpGraph: tvm_buda.perf_report from a compiled model's ModuleGraphs,
benchmarks/ from a traced framework model, tests by hand. Shapes are per run of the graph
(`samples_per_run` samples), never executed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..constants import TILE_DIM
from ..dataformat import DataFormat, MathFidelity
from ..formats import tile_bytes

# Op kinds: how an op's cycles are counted (costs.py). Keys are PyBuda op names.
MATMUL, CONV, DEPTHWISE, POOL = "matmul", "conv", "depthwise", "pool"
BINARY, MULTIPLY, SFPU, REDUCE = "binary", "multiply", "sfpu", "reduce"
SOFTMAX, LAYERNORM, MOVE, TM = "softmax", "layernorm", "move", "tm"
SOFTMAX_BW, LAYERNORM_BW = "softmax_bw", "layernorm_bw"

OP_KINDS: dict[str, str] = {
    "Matmul": MATMUL, "SparseMatmul": MATMUL,
    "Conv2d": CONV, "Conv2dTranspose": CONV,
    "MaxPool2d": POOL, "AvgPool2d": POOL,
    "Add": BINARY, "Subtract": BINARY, "Max": BINARY, "Min": BINARY, "Where": BINARY, "Heaviside": BINARY,
    "Equal": BINARY, "NotEqual": BINARY, "Greater": BINARY, "GreaterEqual": BINARY, "Less": BINARY,
    "LessEqual": BINARY, "LogicalAnd": BINARY, "LogicalOr": BINARY,
    "Multiply": MULTIPLY, "Divide": MULTIPLY,
    "Relu": SFPU, "Relu6": SFPU, "Clip": SFPU, "Gelu": SFPU, "Exp": SFPU, "Log": SFPU, "Sigmoid": SFPU,
    "Tanh": SFPU, "Sqrt": SFPU, "Reciprocal": SFPU, "Abs": SFPU, "LeakyRelu": SFPU, "Silu": SFPU,
    "Sin": SFPU, "Cos": SFPU, "Erf": SFPU, "Pow": SFPU, "Power": SFPU, "LogicalNot": SFPU, "GeluDerivative": SFPU,
    "ReduceSum": REDUCE, "ReduceAvg": REDUCE, "ReduceMax": REDUCE, "ReduceMin": REDUCE, "Argmax": REDUCE,
    "nn.Softmax": SOFTMAX, "Softmax": SOFTMAX, "nn.LogSoftmax": SOFTMAX, "LogSoftmax": SOFTMAX,
    "nn.Layernorm": LAYERNORM, "Layernorm": LAYERNORM,
    "nn.SoftmaxBw": SOFTMAX_BW, "SoftmaxBw": SOFTMAX_BW, "nn.LayernormBw": LAYERNORM_BW, "LayernormBw": LAYERNORM_BW,
    "Concatenate": MOVE, "BinaryStack": MOVE, "Buffer": MOVE, "Nop": MOVE,
    # Tensor manipulations ride on the edges between ops (PyBuda applies them while data moves):
    "Transpose": TM, "Permute": TM, "Reshape": TM, "Identity": TM, "Squeeze": TM, "Unsqueeze": TM,
    "Flatten": TM, "Broadcast": TM, "BroadcastTo": TM, "Index": TM, "Select": TM, "Pad": TM, "Cast": TM,
    "HSlice": TM, "HStack": TM, "VSlice": TM, "VStack": TM, "Constant": TM,
}


def op_kind(op_type: str) -> str:
    """The cost kind of an op; unknown ops are charged as pure data movement (and flagged)."""
    return OP_KINDS.get(op_type, MOVE)


def is_known(op_type: str) -> bool:
    return op_type in OP_KINDS


def ceil_tiles(n: int) -> int:
    return max(1, math.ceil(int(n) / TILE_DIM))


def tile_dims(shape) -> tuple[int, int, int]:
    """(slices, row tiles, column tiles) of a tensor tiled on its last two dims."""
    shape = tuple(int(d) for d in shape)
    if not shape:
        return 1, 1, 1
    rows = shape[-2] if len(shape) >= 2 else 1
    return math.prod(shape[:-2]), ceil_tiles(rows), ceil_tiles(shape[-1])


def tensor_tiles(shape) -> int:
    z, rt, ct = tile_dims(shape)
    return z * rt * ct


def tensor_bytes(shape, fmt: DataFormat) -> int:
    """Bytes of a tile-padded tensor in `fmt`: what moves over NoC, DRAM or PCIe."""
    return tensor_tiles(shape) * tile_bytes(fmt)


@dataclass(frozen=True)
class PerfOp:
    """One device op. `inputs`/`output` are value names linking ops into a graph."""

    name: str                                   # unique; what overrides and reports use
    op_type: str                                # PyBuda op name: "Matmul", "Conv2d", "nn.Softmax", ...
    input_shapes: tuple
    output_shape: tuple
    inputs: tuple = ()
    output: str = ""                            # value name; defaults to `name`
    attrs: dict = field(default_factory=dict, compare=False)
    data_format: DataFormat = DataFormat.Float16_b
    math_fidelity: MathFidelity = MathFidelity.HiFi3
    weight_format: DataFormat | None = None     # parameters feeding the op (default: data_format)
    subgraph: int = 0                           # device program; a new one always starts a new epoch

    @property
    def value(self) -> str:
        return self.output or self.name

    @property
    def kind(self) -> str:
        return op_kind(self.op_type)


@dataclass(frozen=True)
class HostTransfer:
    """A tensor crossing PCIe once per run: device inputs (h2d) and outputs (d2h) of a device program."""

    label: str
    direction: str                              # "h2d" or "d2h"
    shape: tuple
    data_format: DataFormat

    @property
    def bytes(self) -> int:
        return tensor_bytes(self.shape, self.data_format)


@dataclass
class OpGraph:
    """Ops in execution order, the names that are weights, and what crosses the host link."""

    ops: list[PerfOp]
    weights: set[str] = field(default_factory=set)
    transfers: list[HostTransfer] = field(default_factory=list)
    samples_per_run: int = 1
    name: str = "model"
    graph_breaks: int = 0                       # host<->device switches beyond the model's own I/O

    def __post_init__(self):
        names = [op.name for op in self.ops]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"op names must be unique within a graph; repeated: {dup[:5]}")
