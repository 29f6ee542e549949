"""Attribute validation for the public ops: wrong types or values fail before any kernel runs,
with an error naming the op type, the op name and the argument."""

from __future__ import annotations

import numbers

from ..kernels import OpArgumentError
from ..tensor import plain_ints


class Args:
    """Checks and normalises the attributes of one op call."""

    __slots__ = ("op_type", "name")

    def __init__(self, op_type: str, name):
        self.op_type = op_type
        self.name = name

    @property
    def where(self) -> str:
        return f"{self.op_type} {self.name!r}"

    def fail(self, argument: str, problem: str):
        raise OpArgumentError(argument, problem, self.where)

    def int(self, argument: str, value, minimum: int | None = None) -> int:
        if type(value) is int and (minimum is None or value >= minimum):   # the common case first
            return value
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            self.fail(argument, f"must be an int, got {value!r}")
        if minimum is not None and value < minimum:
            self.fail(argument, f"must be >= {minimum}, got {value}")
        return int(value)

    def float(self, argument: str, value) -> float:
        if type(value) is float:   # (the ABC check below costs a Python call)
            return value
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            self.fail(argument, f"must be a number, got {value!r}")
        return float(value)

    def bool(self, argument: str, value) -> bool:
        if type(value) is bool:
            return value
        if not isinstance(value, (bool, numbers.Integral)) or value not in (0, 1):
            self.fail(argument, f"must be True or False, got {value!r}")
        return bool(value)

    def choice(self, argument: str, value, choices) -> str:
        if value not in choices:
            self.fail(argument, f"must be one of {list(choices)}, got {value!r}")
        return value

    def ints(self, argument: str, value, lengths=None, minimum: int | None = None) -> tuple[int, ...]:
        if type(value) is tuple and minimum is None and plain_ints(value):
            values = value   # the common case (generated code passes tuples of ints)
        else:
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                self.fail(argument, f"must be a sequence of ints, got {value!r}")
            values = tuple(self.int(argument, v, minimum) for v in value)
        if lengths is not None and len(values) not in lengths:
            self.fail(argument, f"must have {' or '.join(map(str, lengths))} values, got {len(values)}")
        return values

    def int_or_pair(self, argument: str, value, minimum: int = 1):
        """An int, or (height, width)."""
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return self.int(argument, value, minimum)
        return self.ints(argument, value, (2,), minimum)

    def padding(self, argument: str, value):
        """"same", "valid", an int, or (left, right, top, bottom)."""
        if isinstance(value, str):
            return self.choice(argument, value, ("same", "valid"))
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return self.int(argument, value, 0)
        return self.ints(argument, value, (4,), 0)

    def shape(self, argument: str, value) -> tuple[int, ...]:
        values = self.ints(argument, value)
        if values and min(values) > 0:   # the common case: every dim given
            return values
        if any(d < -1 or d == 0 for d in values) or values.count(-1) > 1:
            self.fail(argument, f"must have positive dims (one may be -1), got {values}")
        return values


def positive_ints(value) -> bool:
    """Whether `value` is a non-empty tuple of positive ints (not bools): a shape Args.shape passes
    as it is, checked without making an Args (every Reshape asks)."""
    if type(value) is not tuple or not value:
        return False
    for v in value:
        if type(v) is not int or v <= 0:
            return False
    return True
