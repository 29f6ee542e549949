"""Reading constants inside rewrite patterns: DPL matches "some constant", these helpers say which."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax
from tvm.relax.dpl import is_const


def constant_array(expr) -> np.ndarray | None:
    """The value of a Relax tensor constant, or None."""
    if isinstance(expr, tvm.ir.Constant) and isinstance(getattr(expr, "value", None), tvm.runtime.Tensor):
        return expr.value.numpy()
    return None


def scalar_value(expr) -> float | None:
    """The value of a constant holding one number (any shape of size 1), or None."""
    value = constant_array(expr)
    if value is None or value.size != 1 or value.dtype.kind not in "fiu":
        return None
    return float(value.reshape(()))


def is_filled_with(expr, expected: float) -> bool:
    """A constant of any shape whose every element is `expected` (e.g. folded zeros_like)."""
    value = constant_array(expr)
    return value is not None and value.size > 0 and bool(np.all(value == expected))


def is_scalar(expr, expected: float, rel: float = 1e-4) -> bool:
    value = scalar_value(expr)
    return value is not None and abs(value - expected) <= rel * max(abs(expected), 1e-30)


def static_shape(expr) -> list[int] | None:
    """The static shape of a tensor expression, or None."""
    return type_shape(getattr(expr, "ty", None))


def type_shape(ty) -> list[int] | None:
    """The static shape of a tensor type, or None."""
    shape = ty.shape if isinstance(ty, relax.TensorType) else None
    if not isinstance(shape, relax.ShapeExpr):
        return None
    # one FFI read per dim (IntImm.value; symbolic dims have none): 8 us a shape instead of 34,
    # which the passes and the partition checks pay thousands of times on BERT-base
    dims = [getattr(d, "value", None) for d in shape.values]
    return dims if all(type(d) is int for d in dims) else None


def dtype_of(expr) -> str | None:
    ty = getattr(expr, "ty", None)
    return str(ty.dtype) if isinstance(ty, relax.TensorType) else None


def scalar_like(value: float, expr) -> relax.Expr:
    """A scalar constant of `expr`'s dtype."""
    return relax.const(value, dtype_of(expr) or "float32")


class ScalarSlots:
    """Constant slots of a pattern, each expecting a value: `slots(0.5)` is a pattern matching any
    constant; `slots.hold(matches)` checks that every matched slot holds its value."""

    def __init__(self, rel: float = 1e-4):
        self.expected = {}
        self.rel = rel

    def __call__(self, value: float):
        slot = is_const()
        self.expected[slot] = value
        return slot

    def hold(self, matches) -> bool:
        return all(is_scalar(matches[slot], value, self.rel) for slot, value in self.expected.items()
                   if slot in matches)
