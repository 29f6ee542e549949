"""Which data format and math fidelity each op runs at.

Resolution order, lowest to highest priority: built-in defaults, global options
(`set_configuration_options`), AMP presets, then `configure_mixed_precision` overrides in the
order they were given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .dataformat import DataFormat, MathFidelity


@dataclass(frozen=True)
class OpNumerics:
    """Formats for one op: what it writes, what it accumulates in, how precisely it multiplies."""

    output_df: DataFormat = DataFormat.Float16_b
    accumulate_df: DataFormat = DataFormat.Float16_b
    math_fidelity: MathFidelity = MathFidelity.HiFi3
    weight_df: DataFormat | None = None  # format for parameters/constants feeding the op


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


@dataclass
class NumericsConfig:
    default_df_override: DataFormat | None = None
    accumulate_df: DataFormat = DataFormat.Float16_b
    math_fidelity: MathFidelity = MathFidelity.HiFi3
    fp32_fallback: DataFormat = DataFormat.Float16_b
    rules: list[MixedPrecisionRule] = field(default_factory=list)

    def resolve(self, op_type: str, op_name: str) -> OpNumerics:
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


def amp_rules(amp_level: int) -> list[MixedPrecisionRule]:
    """Automatic mixed precision presets: `amp_level` / PYBUDA_AMP_LEVEL, then PYBUDA_AMP_LIGHT."""
    from .env import AMP_LEVEL, AMP_LIGHT

    level = AMP_LEVEL.get_int() if AMP_LEVEL.get() else amp_level
    rules: list[MixedPrecisionRule] = []
    if level not in (0, 1):
        raise ValueError(f"amp_level must be 0 or 1, got {level}")
    if level == 1:
        rules += [
            MixedPrecisionRule(output_df=DataFormat.Bfp8_b),
            MixedPrecisionRule(op_type="Layernorm", output_df=DataFormat.Float16_b),
            MixedPrecisionRule(op_type="Softmax", output_df=DataFormat.Float16_b),
            MixedPrecisionRule(op_type="Matmul", math_fidelity=MathFidelity.HiFi2),
        ]
    light = AMP_LIGHT.get_int()
    if light == 1:
        rules.append(MixedPrecisionRule(op_type="Matmul", input_df=DataFormat.Bfp8, math_fidelity=MathFidelity.HiFi2))
    elif light == 2:
        rules.append(MixedPrecisionRule(op_type="Matmul", input_df=DataFormat.Bfp4, math_fidelity=MathFidelity.LoFi))
    elif light != 0:
        raise ValueError(f"PYBUDA_AMP_LIGHT must be 0, 1 or 2, got {light}")
    return rules
