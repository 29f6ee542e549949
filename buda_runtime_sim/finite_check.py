"""No silent inf or NaN: a device program's outputs are checked after every run, and an inf or NaN
the device's numerics made is an error naming the op that made it.

Formats saturate (formats.py), so inf or NaN from finite inputs comes from an op: the model's own
arithmetic (exp beyond float32, log of 0, x / 0, as in the framework) or the device's numerics (a
value rounded to 0 and then divided by, a kernel at the edge of its format). A program's outputs
cost one vectorised isfinite count per run. When one holds inf or NaN while every program input was
finite, the program runs again with every op watched (context.watching): the first op whose result
is not all finite while every operand's value is finite is the cause. The same program then runs
in float32 (Float32 formats, HiFi4) up to that op. Finite there: the device made the inf/NaN, so
NonFiniteResultError (or a RuntimeWarning, per the setting). Not finite there either: the model's
arithmetic made it; one RuntimeWarning per program, never an error. A program found innocent (no op
to blame, e.g. a weight holding inf) or blamed on the model's arithmetic is not diagnosed again.

Setting: CompilerConfig.check_finite ("error", the default; "warn"; "off"), or PYBUDA_CHECK_FINITE
(error or 1, warn, off or 0), which wins when set.
"""

from __future__ import annotations

import warnings
import weakref
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from . import context
from .dataformat import DataFormat, MathFidelity
from .env import CHECK_FINITE
from .module import Constant, Parameter
from .numerics_config import NumericsConfig
from .tensor import Tensor

MODES = ("error", "warn", "off")
_SPELLINGS = {"error": "error", "1": "error", "true": "error", "warn": "warn", "off": "off", "0": "off", "false": "off"}
# Formats and fidelity of the float32 reference run (the framework's arithmetic, as near as the device gets).
FLOAT32_NUMERICS = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                                  math_fidelity=MathFidelity.HiFi4, fp32_fallback=DataFormat.Float32)
# Programs diagnosed once and found not at fault (their later non-finite outputs are not re-run).
_SETTLED: "weakref.WeakKeyDictionary[object, str]" = weakref.WeakKeyDictionary()


def parse_mode(value) -> str:
    """"error", "warn" or "off" from a setting (True/False, 1/0 and those words too)."""
    if value is None or value is True:
        return "error"
    if value is False:
        return "off"
    mode = _SPELLINGS.get(str(value).strip().lower())
    if mode is None:
        raise ValueError(f"check_finite must be one of {MODES} (or 1/0), got {value!r}: {CHECK_FINITE.doc}")
    return mode


def current_mode(setting=None) -> str:
    """The mode in force: PYBUDA_CHECK_FINITE when set, else `setting`."""
    env = CHECK_FINITE.get()
    return parse_mode(env if env else setting)


class NonFiniteResultError(RuntimeError):
    """A device program made inf or NaN from finite inputs where float32 arithmetic does not."""

    def __init__(self, culprit: "Culprit | str"):
        super().__init__(culprit if isinstance(culprit, str) else culprit.describe())
        self.culprit = None if isinstance(culprit, str) else culprit   # (a message alone: rebuilt by an FFI)


@dataclass(frozen=True)
class Culprit:
    """The first op of a program whose result is not all finite while its operands are."""

    program: str
    op_type: str
    name: str
    operand_shapes: tuple
    output_shape: tuple
    output_df: DataFormat
    nonfinite: int
    size: int
    conversions: tuple = ()          # operands finite as given but not in their device format
    float32_finite: bool | None = None   # the op's result in the float32 run (None: not reached)

    def describe(self) -> str:
        shapes = ", ".join(str(list(s)) for s in self.operand_shapes)
        text = (f"device program {self.program!r}: op {self.name!r} ({self.op_type}, operands {shapes} -> "
                f"{list(self.output_shape)} in {self.output_df.name}) gave {self.nonfinite} of {self.size} values "
                "inf/NaN from finite operands")
        for note in self.conversions:
            text += f"; {note}"
        if self.float32_finite:
            return (text + "; the same program in float32 gives finite values there, so the device's numerics "
                    f"made them (set CompilerConfig.check_finite or {CHECK_FINITE.name} to warn or off to go on)")
        if self.float32_finite is False:
            return text + "; float32 gives inf/NaN there too: the model's own arithmetic (the framework does the same)"
        return text


def all_finite(values) -> bool:
    """Every value finite (integer and boolean arrays always are)."""
    array = host_value(values)
    if array.dtype.kind not in "fc":
        return True
    return bool(np.count_nonzero(np.isfinite(array)) == array.size)


def check_program(program: str, module, inputs: list, outputs: list, rerun: Callable[[DataFormat | None], object],
                  setting=None) -> None:
    """After a run: raise or warn if `outputs` hold inf/NaN the device made from finite `inputs`.

    module: the program's module object (remembers a program found not at fault); inputs and
    outputs: host arrays or device tensors; rerun(input_df): runs the program once more on its
    inputs converted to `input_df` (None: as in the run being checked), under the current context."""
    mode = current_mode(setting)
    if mode == "off" or all(all_finite(o) for o in outputs) or not all(all_finite(x) for x in inputs):
        return
    if module is not None and module in _SETTLED:
        return
    culprit = find_culprit(program, rerun)
    if culprit is None or not culprit.float32_finite:
        if module is not None:
            _SETTLED[module] = culprit.name if culprit is not None else ""
        if culprit is not None:
            warnings.warn(culprit.describe(), RuntimeWarning, stacklevel=3)
        return
    if mode == "error":
        raise NonFiniteResultError(culprit)
    warnings.warn(culprit.describe(), RuntimeWarning, stacklevel=3)


def find_culprit(program: str, rerun: Callable[[DataFormat | None], object]) -> Culprit | None:
    """Run the program with every op watched; the first op making inf/NaN from finite operands, with
    what its result is when the program runs in float32 (None: no such op)."""
    first = _FirstNonFinite(program)
    _watched(rerun, first, None)
    if first.found is None:
        return None
    reference = _ResultOf(first.found.name)
    _watched(rerun, reference, FLOAT32_NUMERICS)
    return replace(first.found, float32_finite=reference.finite)


class _Stop(Exception):
    """Ends a watched run once its observer has what it needs."""


def _watched(rerun, observer, numerics: NumericsConfig | None) -> None:
    with context.watching(observer, numerics):
        try:
            rerun(None if numerics is None else numerics.input_df)
        except _Stop:
            pass


def host_value(operand) -> np.ndarray:
    """An op operand's value as given: a device tensor's values, a weight's or constant's host value,
    a Python scalar."""
    if isinstance(operand, Tensor):
        return operand.logical()
    if hasattr(operand, "detach"):                 # a torch tensor given as a program input
        return operand.detach().numpy()
    if isinstance(operand, Parameter):
        return operand.value()
    if isinstance(operand, Constant):
        return np.asarray(operand.value)
    return np.asarray(operand)


class _FirstNonFinite:
    def __init__(self, program: str):
        self.program = program
        self.found: Culprit | None = None

    def __call__(self, op_type, name, operands, tensors, result, numerics, attrs) -> None:
        if all_finite(result) or not all(all_finite(host_value(x)) for x in operands):
            return
        values = result.logical()
        conversions = tuple(
            f"operand {i} is finite as given but not in {t.data_format.name}"
            for i, (x, t) in enumerate(zip(operands, tensors or ())) if not isinstance(x, Tensor) and not all_finite(t))
        self.found = Culprit(self.program, op_type, name, tuple(tuple(np.shape(host_value(x))) for x in operands),
                             tuple(result.shape), result.data_format,
                             int(values.size - np.count_nonzero(np.isfinite(values))), int(values.size), conversions)
        raise _Stop


class _ResultOf:
    def __init__(self, name: str):
        self.name = name
        self.finite: bool | None = None

    def __call__(self, op_type, name, operands, tensors, result, numerics, attrs) -> None:
        if name == self.name:
            self.finite = all_finite(result)
            raise _Stop
