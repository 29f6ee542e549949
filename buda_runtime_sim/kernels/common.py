"""What every kernel shares: the argument error, axis normalisation and building results.

Invariant kept by every kernel: the padding region of a result is zero. Kernels that compute on
logical values re-pad with zeros (`result`); kernels that compute on padded storage clear the
padding after an f(0) != 0 (`tensor.zero_padding`).
"""

from __future__ import annotations

import numpy as np

from ..compact_tensor import compact_or_padded
from ..dataformat import DataFormat
from ..float_errors import ignored
from ..formats import bfloat16_values, holds_exactly, quantize
from ..tensor import Tensor

_BF16 = DataFormat.Float16_b
_FLOAT32 = np.dtype(np.float32)


class OpArgumentError(ValueError):
    """A bad argument to an op. Kernels raise it with the argument's name; the op API adds the
    op type and op name before the user sees it."""

    def __init__(self, argument: str, problem: str, op: str | None = None):
        super().__init__(f"{op}: {argument} {problem}" if op else f"{argument} {problem}")
        self.argument = argument
        self.problem = problem
        self.op = op

    def naming(self, op: str) -> "OpArgumentError":
        """The same error, prefixed with the op ("Conv2d 'conv1'")."""
        return OpArgumentError(self.argument, self.problem, op)


def axis(dim, ndim: int, argument: str = "dim") -> int:
    """A dimension index in [-ndim, ndim) as a non-negative index."""
    if type(dim) is not int:   # (int() of an int costs a call)
        dim = int(dim)
    if not -ndim <= dim < ndim:
        raise OpArgumentError(argument, f"must be in [{-ndim}, {ndim - 1}] for a {ndim}-D operand, got {dim}")
    return dim % ndim


def broadcast_shape(shape_a, shape_b, argument: str = "operandB") -> tuple[int, ...]:
    """numpy's broadcast of two shapes; a mismatch is the second operand's fault."""
    shape_a, shape_b = tuple(shape_a), tuple(shape_b)
    if shape_a == shape_b:   # the common case, without np.broadcast_shapes' ~1.5 us
        return shape_a
    try:
        return np.broadcast_shapes(shape_a, shape_b)
    except ValueError:
        raise OpArgumentError(argument, f"of shape {tuple(shape_b)} does not broadcast with {tuple(shape_a)}") from None


def result(values: np.ndarray, numerics, held_in=None) -> Tensor:
    """A kernel's logical float result as a device tensor: rounded to the output format, zero-padded.

    Rounding before padding gives the same storage as rounding the padded array (every format
    rounds zero to zero, and zeros appended to a row never move a block-float block's shared
    exponent: formats.quantize) without rounding the padding: a reduction's [.., 32, 1] result
    pads to 32 times its size. `held_in`: every value is one of a tensor held in that format (a
    select): no rounding where the output format holds it exactly (as Tensor.from_padded decides)."""
    output_df = numerics.output_df
    if held_in is not None and holds_exactly(output_df, held_in):
        return compact_or_padded(np.asarray(values, dtype=np.float32), output_df)
    if output_df is _BF16 and type(values) is np.ndarray and values.dtype == _FLOAT32:
        with ignored():   # the default format, as formats.quantize rounds it (saturating); C-ordered
            return compact_or_padded(bfloat16_values(values, order="C"), output_df)
    values = np.asarray(values, dtype=np.float32)
    return compact_or_padded(quantize(values, output_df), output_df)


def moved(a: Tensor, values: np.ndarray) -> Tensor:
    """Data movement result: same values, new layout, the input's format (no rounding)."""
    return compact_or_padded(np.asarray(values, dtype=np.float32), a.data_format)


def logical_inputs(inputs: list[Tensor]) -> list[np.ndarray]:
    return [t.logical() for t in inputs]
