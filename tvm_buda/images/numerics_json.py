"""A model's numerics as JSON, so an image computes with the formats it was compiled with
(whatever PYBUDA_AMP_* or set_configuration_options say in the loading process)."""

from __future__ import annotations

from dataclasses import asdict

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.numerics_config import MixedPrecisionRule, NumericsConfig

_RULE_ENUMS = {"output_df": DataFormat, "accumulate_df": DataFormat, "input_df": DataFormat,
               "math_fidelity": MathFidelity}


def _name(value):
    return None if value is None else value.name


def numerics_to_dict(numerics: NumericsConfig) -> dict:
    """Every field, AMP presets already expanded into rules."""
    rules = [{k: _name(v) if k in _RULE_ENUMS else v for k, v in asdict(r).items()} for r in numerics.rules]
    return {"default_df_override": _name(numerics.default_df_override), "accumulate_df": numerics.accumulate_df.name,
            "math_fidelity": numerics.math_fidelity.name, "fp32_fallback": numerics.fp32_fallback.name,
            "rules": rules}


def numerics_from_dict(data: dict) -> NumericsConfig:
    def parse(enum, value):
        return None if value is None else enum.from_json(value)

    rules = [MixedPrecisionRule(**{k: parse(_RULE_ENUMS[k], v) if k in _RULE_ENUMS else v for k, v in r.items()})
             for r in data["rules"]]
    return NumericsConfig(default_df_override=parse(DataFormat, data["default_df_override"]),
                          accumulate_df=DataFormat.from_json(data["accumulate_df"]),
                          math_fidelity=MathFidelity.from_json(data["math_fidelity"]),
                          fp32_fallback=DataFormat.from_json(data["fp32_fallback"]), rules=rules)
