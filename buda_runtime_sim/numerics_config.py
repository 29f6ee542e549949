"""Which data format and math fidelity each op runs at.

Resolution order, lowest to highest priority: built-in defaults, global options
(`set_configuration_options`), AMP presets, then `configure_mixed_precision` overrides in the
order they were given.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field, replace

from .dataformat import DataFormat, MathFidelity
from .env import AMP_LEVEL


@dataclass(frozen=True)
class OpNumerics:
    """Formats for one op: what it writes, what it accumulates in, how precisely it multiplies."""

    output_df: DataFormat = DataFormat.Float16_b
    accumulate_df: DataFormat = DataFormat.Float16_b
    math_fidelity: MathFidelity = MathFidelity.HiFi3
    weight_df: DataFormat | None = None  # format for parameters/constants feeding the op

    def __post_init__(self):
        # The generated __hash__'s value, computed once: consteval keys hash an op's numerics per call.
        object.__setattr__(self, "_hash", hash((self.output_df, self.accumulate_df, self.math_fidelity, self.weight_df)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True)
class MixedPrecisionRule:
    """One `configure_mixed_precision` call."""

    op_type: str | None = None
    name_regex: str | None = None
    output_df: DataFormat | None = None
    accumulate_df: DataFormat | None = None
    math_fidelity: MathFidelity | None = None
    input_df: DataFormat | None = None

    def matches(self, op_type: str, op_name: str) -> bool:
        if self.op_type is not None and self.op_type.lower() != op_type.lower():
            return False
        if self.name_regex is not None and not re.fullmatch(self.name_regex, op_name):
            return False
        return True


_RESOLVED_MAX = 8192   # op calls resolved and kept per configuration (cleared when full)
_FIELDS = frozenset(("default_df_override", "accumulate_df", "math_fidelity", "fp32_fallback", "rules"))


@dataclass
class NumericsConfig:
    default_df_override: DataFormat | None = None
    accumulate_df: DataFormat = DataFormat.Float16_b
    math_fidelity: MathFidelity = MathFidelity.HiFi3
    fp32_fallback: DataFormat = DataFormat.Float16_b
    rules: list[MixedPrecisionRule] = field(default_factory=list)
    # (op type, op name) -> OpNumerics, valid for the configuration it was resolved under: assigning
    # a field above starts a new dict (__setattr__), and so does a `rules` list changed in place
    # (resolve compares it with `_resolved_rules`, a copy). Always rebound, never emptied: a
    # shallow copy that shares them keeps answers that were right for it. op.dispatch.run_op reads
    # them directly (resolve's first lines) once per op.
    _resolved: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _resolved_rules: list = field(default_factory=list, init=False, repr=False, compare=False)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in _FIELDS:
            object.__setattr__(self, "_resolved", {})

    def resolve(self, op_type: str, op_name: str) -> OpNumerics:
        """The op's numerics; runs once per op call, so answers are kept (see `_resolved`)."""
        if self.rules != self._resolved_rules:
            self._resolved = {}
            self._resolved_rules = list(self.rules)
        resolved = self._resolved
        result = resolved.get((op_type, op_name))
        if result is None:
            if len(resolved) >= _RESOLVED_MAX:
                resolved = self._resolved = {}
            result = resolved[op_type, op_name] = self._resolve(op_type, op_name)
        return result

    def _resolve(self, op_type: str, op_name: str) -> OpNumerics:
        out = self.input_df
        result = OpNumerics(output_df=out, accumulate_df=self.accumulate_df, math_fidelity=self.math_fidelity)
        for rule in self.rules:
            if rule.matches(op_type, op_name):
                result = replace(
                    result,
                    output_df=_first(rule.output_df, result.output_df),
                    accumulate_df=_first(rule.accumulate_df, result.accumulate_df),
                    math_fidelity=_first(rule.math_fidelity, result.math_fidelity),
                    weight_df=_first(rule.input_df, result.weight_df),
                )
        return result

    @property
    def input_df(self) -> DataFormat:
        """Format of data arriving on the device (and the default for every op output)."""
        return _first(self.default_df_override, self.fp32_fallback)

    def cache_key(self) -> dict:
        """Everything here that changes numbers, as JSON-able data."""
        return {
            "default_df_override": self.default_df_override and self.default_df_override.name,
            "accumulate_df": self.accumulate_df.name,
            "math_fidelity": self.math_fidelity.name,
            "fp32_fallback": self.fp32_fallback.name,
            "rules": [repr(r) for r in self.rules],
        }


def _first(*values):
    """The first value that is not None (enum members with value 0, like Float32 and LoFi, are falsy)."""
    return next((v for v in values if v is not None), None)


def check_amp_level(level) -> int | None:
    """PyBuda accepts AMP levels 0-3 (None is 0)."""
    if level is not None and (isinstance(level, bool) or level not in (0, 1, 2, 3)):
        raise ValueError(f"amp_level must be 0, 1, 2 or 3 (or None for 0), got {level!r}")
    return level


def amp_rules(amp_level: int, default_df_override: DataFormat | None = None) -> list[MixedPrecisionRule]:
    """Automatic mixed precision presets for `amp_level` (PYBUDA_AMP_LEVEL wins when set).

    1: mixed b formats: layernorm and softmax bfloat16, every other op Bfp8_b, matmuls HiFi2
       (the user guide's PYBUDA_AMP_LEVEL=1).
    2: mixed a formats: layernorm and softmax Float16, every other op Bfp8, matmuls accumulate in
       Float16 (PyBuda's level-2 preset; its GELU intermediate format has no counterpart here).
    3: accepted, no preset: PyBuda skips AMP for levels outside 0-2 with a warning, and so do we.
    As in PyBuda, a level above 0 with a default_df_override picks the preset of that format's
    family: a b format (Float16_b, Bfp8_b, ...) gives level 1's, an a format level 2's.
    """
    level = check_amp_level(AMP_LEVEL.get_int() if AMP_LEVEL.get() else amp_level) or 0
    if level == 3:
        warnings.warn("amp_level=3 is not an AMP preset (PyBuda's are 1 and 2): no mixed precision applied",
                      RuntimeWarning, stacklevel=3)
        return []
    if level and default_df_override is not None:
        level = 1 if default_df_override.name.endswith("_b") or default_df_override == DataFormat.Float32 else 2
    if level == 1:
        return [
            MixedPrecisionRule(output_df=DataFormat.Bfp8_b),
            MixedPrecisionRule(op_type="Layernorm", output_df=DataFormat.Float16_b),
            MixedPrecisionRule(op_type="Softmax", output_df=DataFormat.Float16_b),
            MixedPrecisionRule(op_type="Matmul", math_fidelity=MathFidelity.HiFi2),
        ]
    if level == 2:
        return [
            MixedPrecisionRule(output_df=DataFormat.Bfp8),
            MixedPrecisionRule(op_type="Layernorm", output_df=DataFormat.Float16),
            MixedPrecisionRule(op_type="Softmax", output_df=DataFormat.Float16),
            MixedPrecisionRule(op_type="Matmul", accumulate_df=DataFormat.Float16),
        ]
    return []


def amp_light_rules(light: int) -> list[MixedPrecisionRule]:
    """PYBUDA_AMP_LIGHT / CompilerConfig.enable_amp_light: lower-precision matmul weights.

    1: Bfp8 weights, HiFi2; 2: Bfp4, LoFi (the user guide's levels); 3: Bfp4, LoFi too (PyBuda's
    enable_amp_light accepts 3 as Bfp4 with LoFi).
    """
    if light == 1:
        return [MixedPrecisionRule(op_type="Matmul", input_df=DataFormat.Bfp8, math_fidelity=MathFidelity.HiFi2)]
    if light in (2, 3):
        return [MixedPrecisionRule(op_type="Matmul", input_df=DataFormat.Bfp4, math_fidelity=MathFidelity.LoFi)]
    if light != 0:
        raise ValueError(f"PYBUDA_AMP_LIGHT / enable_amp_light must be 0, 1, 2 or 3, got {light}")
    return []
