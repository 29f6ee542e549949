"""CompilerConfig: every option that shapes compilation and simulation, and the global instance.

Lives in the simulator package because the PyBuda runtime API (`set_configuration_options`)
edits it; tvm_buda reads it when compiling.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields

from .dataformat import DataFormat, MathFidelity
from .env import AMP_LEVEL, AMP_LIGHT
from .numerics_config import MixedPrecisionRule, NumericsConfig, amp_rules

DEFAULT_CPU_FALLBACK_OPS = frozenset({"embedding", "cumsum"})


@dataclass
class CompilerConfig:
    # ---- partitioning and CPU fallback ----
    enable_tvm_cpu_fallback: bool = True
    cpu_fallback_ops: set[str] = field(default_factory=lambda: set(DEFAULT_CPU_FALLBACK_OPS))
    enable_tm_cpu_fallback: bool = False
    tm_cpu_fallback_max_depth: int = 10
    # ---- numerics ----
    default_df_override: DataFormat | None = None
    accumulate_df: DataFormat = DataFormat.Float16_b
    default_math_fidelity: MathFidelity = MathFidelity.HiFi3
    fp32_fallback: DataFormat = DataFormat.Float16_b
    amp_level: int = 0
    mixed_precision: list[MixedPrecisionRule] = field(default_factory=list)
    enable_stable_softmax: bool = True
    # ---- placement and device (perf model) ----
    device_config: str | None = None
    harvested_rows: list[int] | None = None
    place_on_one_row: bool = False
    op_size_overrides: dict[str, tuple[int, int]] = field(default_factory=dict)
    epoch_breaks: list[str] = field(default_factory=list)
    chip_breaks: list[str] = field(default_factory=list)
    # ---- debugging ----
    op_intermediates_to_save: list[str] = field(default_factory=list)
    # ---- accepted for compatibility, recorded and shown in reports, no effect on the simulator ----
    other_options: dict = field(default_factory=dict)
    # ---- generated code and cache ----
    generated_modules_dir: str = "generated_modules"
    tvm_graph_store_path: str = ""
    tvm_graph_load_path: str = ""

    def add_cpu_fallback_ops(self, ops) -> None:
        self.cpu_fallback_ops |= {ops} if isinstance(ops, str) else set(ops)

    def remove_cpu_fallback_ops(self, ops) -> None:
        self.cpu_fallback_ops -= {ops} if isinstance(ops, str) else set(ops)

    def numerics(self) -> NumericsConfig:
        return NumericsConfig(
            default_df_override=self.default_df_override,
            accumulate_df=self.accumulate_df,
            math_fidelity=self.default_math_fidelity,
            fp32_fallback=self.fp32_fallback,
            rules=amp_rules(self.amp_level) + list(self.mixed_precision),
        )

    def result_key(self) -> dict:
        """Every field that can change compiled results, JSON-able (paths excluded), for cache keys."""
        out = {}
        for f in fields(self):
            if f.name in _NOT_RESULT_FIELDS:
                continue
            value = getattr(self, f.name)
            if isinstance(value, (set, frozenset)):
                value = sorted(str(v) for v in value)
            elif hasattr(value, "name") and not isinstance(value, str):
                value = value.name
            elif isinstance(value, (list, tuple, dict)):
                value = repr(value)
            out[f.name] = value
        out["env"] = {v.name: v.get() for v in (AMP_LIGHT, AMP_LEVEL)}  # they change numerics too
        return out

    def copy(self) -> "CompilerConfig":
        return copy.deepcopy(self)


# Where files go, not what they contain.
_NOT_RESULT_FIELDS = frozenset({"generated_modules_dir", "tvm_graph_store_path", "tvm_graph_load_path",
                                "op_intermediates_to_save", "other_options"})

_global_config = CompilerConfig()


def _get_global_compiler_config() -> CompilerConfig:
    return _global_config


def _reset_global_compiler_config() -> None:
    global _global_config
    _global_config = CompilerConfig()
