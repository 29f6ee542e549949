"""Where an optimizer's arithmetic runs: on the host in float32, or as device ops in the
optimizer's formats (PyBuda's AMP puts optimizer ops at Float32 / HiFi4).

An update rule is written once against `m` (`m.value(array)`, arithmetic operators, `m.sqrt`,
`m.norm`, `m.array`), and both backends run the same rule.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import context
from ..dataformat import DataFormat, MathFidelity
from ..numerics_config import NumericsConfig
from ..op.dispatch import run_op
from ..tensor import Tensor


class HostMath:
    """float32 numpy on the host (`device_params=False`)."""

    def value(self, array):
        return np.asarray(array, dtype=np.float32)

    def sqrt(self, x):
        return np.sqrt(x)

    def norm(self, x):
        return np.sqrt(np.sum(np.square(x), dtype=np.float32), dtype=np.float32)

    def array(self, x) -> np.ndarray:
        return np.asarray(x, dtype=np.float32)


class DeviceMath:
    """Simulator ops (Add, Multiply, Sqrt, ...) rounded to `data_format` at `math_fidelity`."""

    def __init__(self, data_format: DataFormat = DataFormat.Float32, math_fidelity: MathFidelity = MathFidelity.HiFi4):
        self.context = context.ExecutionContext(numerics=NumericsConfig(
            default_df_override=data_format, accumulate_df=data_format, math_fidelity=math_fidelity))
        self.data_format = data_format
        self._names = itertools.count()

    def run(self, op: str, inputs: list, **attrs) -> "DeviceValue":
        with context.use(self.context):
            out = run_op(op, f"optimizer_{op.lower()}_{next(self._names)}", [_tensor(x) for x in inputs], **attrs)
        return DeviceValue(self, out)

    def value(self, array):
        return DeviceValue(self, Tensor.from_array(np.asarray(array, dtype=np.float32), self.data_format))

    def sqrt(self, x):
        return self.run("Sqrt", [x])

    def norm(self, x):
        flat = self.run("Reshape", [x], shape=(1, int(np.prod(x.tensor.shape))))
        return self.sqrt(self.run("ReduceSum", [self.run("Multiply", [flat, flat])], dim=-1, keep_dim=True))

    def array(self, x) -> np.ndarray:
        return x.tensor.numpy().astype(np.float32) if isinstance(x, DeviceValue) else np.asarray(x, np.float32)


def _tensor(x):
    if isinstance(x, DeviceValue):
        return x.tensor
    return Tensor.from_array(np.asarray(x, dtype=np.float32))


class DeviceValue:
    """A device tensor with arithmetic operators that run simulator ops."""

    __slots__ = ("math", "tensor")

    def __init__(self, math: DeviceMath, tensor: Tensor):
        self.math = math
        self.tensor = tensor

    def _bin(self, op, other, swap=False):
        a, b = (other, self) if swap else (self, other)
        return self.math.run(op, [a, b])

    def __add__(self, other):
        return self._bin("Add", other)

    def __radd__(self, other):
        return self._bin("Add", other, True)

    def __sub__(self, other):
        return self._bin("Subtract", other)

    def __rsub__(self, other):
        return self._bin("Subtract", other, True)

    def __mul__(self, other):
        return self._bin("Multiply", other)

    def __rmul__(self, other):
        return self._bin("Multiply", other, True)

    def __truediv__(self, other):
        return self._bin("Divide", other)

    def __rtruediv__(self, other):
        return self._bin("Divide", other, True)

    def __neg__(self):
        return self._bin("Multiply", -1.0)
