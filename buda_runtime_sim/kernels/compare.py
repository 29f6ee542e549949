"""Comparisons, logic and select. The device has no bool type: truth values are 1.0 and 0.0 (exact
in every data format), and any non-zero input counts as true."""

from __future__ import annotations

import numpy as np

from ..dataformat import DataFormat
from .common import broadcast_shape, result
from .eltwise import binary
from .registry import kernel


def _as_float(fn):
    return lambda x, y: fn(x, y).astype(np.float32)


# op name -> (numpy comparison, whether it maps (0, 0) to 0 and so keeps the padding zero)
COMPARISONS = {
    "Equal": (np.equal, False),
    "NotEqual": (np.not_equal, True),
    "Greater": (np.greater, True),
    "GreaterEqual": (np.greater_equal, False),
    "Less": (np.less, True),
    "LessEqual": (np.less_equal, False),
    "LogicalAnd": (np.logical_and, True),
    "LogicalOr": (np.logical_or, True),
}


def _register_comparison(op_type: str, fn, keeps_zero: bool) -> None:
    @kernel(op_type)
    def compare(inputs, attrs, numerics):
        # (truth values are bfloat16 values: no rounding pass for a Float16_b or Float32 output)
        return binary(inputs[0], inputs[1], _as_float(fn), numerics, keeps_zero=keeps_zero, held_in=DataFormat.Float16_b)


for _op, (_fn, _keeps_zero) in COMPARISONS.items():
    _register_comparison(_op, _fn, _keeps_zero)


@kernel("LogicalNot")
def logical_not(inputs, attrs, numerics):
    return result(inputs[0].logical() == 0, numerics)


@kernel("Where")
def where(inputs, attrs, numerics):
    """condition ? a : b, broadcasting all three."""
    condition, a, b = inputs[0].logical(), inputs[1].logical(), inputs[2].logical()
    try:
        out = np.where(condition != 0, a, b)
    except ValueError:      # shapes that do not broadcast: the operand at fault named (~8 us less when they do)
        broadcast_shape(broadcast_shape(condition.shape, a.shape, "operandA"), b.shape)
        raise
    # every value is one of a's or b's: held in their format when they share one (as Relu's are)
    held_in = inputs[1].data_format if inputs[1].data_format == inputs[2].data_format else None
    return result(out, numerics, held_in)
