"""CompilerConfig: every option of PyBuda's CompilerConfig, and the global instance.

Lives in the simulator package because the PyBuda runtime API (`set_configuration_options`)
edits it; tvm_buda reads it when compiling. Every PyBuda field is declared (field names and
defaults as in PyBuda's `pybuda/config.py`); an unknown attribute is an AttributeError naming the
closest known one, so a typo never passes silently. Which fields change anything here:
docs/compiler_config.md (fields in `NO_EFFECT` are accepted and change nothing on the simulator).
"""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass, field, fields

from .dataformat import DataFormat, MathFidelity
from .enums import DeviceMode
from .env import AMP_LEVEL, AMP_LIGHT
from .numerics_config import MixedPrecisionRule, NumericsConfig, amp_light_rules, amp_rules, check_amp_level

DEFAULT_CPU_FALLBACK_OPS = frozenset({"embedding", "cumsum"})

# PyBuda's balancer policies (set_configuration_options docstring); the perf model reads them.
BALANCER_POLICIES = ("default", "NLP", "Ribbon", "CNN", "MaximizeTMinimizeGrid", "MinimizeGrid", "Random")
SELF_CUT_TYPES = ("None", "ConsumerOperandDataEdgesFirst", "ProducerUserDataEdgesFirst", "FastCut")
# Attributes balancer_op_override accepts (PyBuda's balancer OpOverride).
OP_OVERRIDE_ATTRIBUTES = ("grid_shape", "force_dram_parameters", "t_stream_dir", "t_stream_shape", "fracture_factor",
                          "u_kt", "input_buffer_multiplier", "output_buffer_multiplier")


@dataclass
class CompilerConfig:
    # ---- partitioning and CPU fallback ----
    enable_tvm_cpu_fallback: bool = True
    cpu_fallback_ops: set[str] = field(default_factory=lambda: set(DEFAULT_CPU_FALLBACK_OPS))
    enable_tm_cpu_fallback: bool = False
    tm_cpu_fallback_max_depth: int = 10
    # ---- numerics ----
    default_df_override: DataFormat | None = None
    accumulate_df: DataFormat = DataFormat.Float16_b           # PyBuda's default_accumulate_df (alias below)
    default_math_fidelity: MathFidelity = MathFidelity.HiFi3
    fp32_fallback: DataFormat = DataFormat.Float16_b
    amp_level: int | None = 0                                  # 0/None: off; 1: mixed b formats; 2: mixed a; 3: off
    mixed_precision: list[MixedPrecisionRule] = field(default_factory=list)   # configure_mixed_precision
    amp_light_level: int = 0                                   # enable_amp_light(level); PYBUDA_AMP_LIGHT wins
    enable_stable_softmax: bool = True
    # ---- placement, balancing and device (perf model) ----
    device_config: str | None = None
    harvested_rows: list[int] | None = None
    place_on_one_row: bool = False
    balancer_policy: str = "default"
    balancer_op_overrides: dict[str, dict] = field(default_factory=dict)   # op -> {attribute: value}
    op_size_overrides: dict[str, tuple[int, int]] = field(default_factory=dict)   # grid_shape overrides
    epoch_breaks: list[str] = field(default_factory=list)      # PyBuda's op_names_to_epoch_break
    chip_breaks: list[str] = field(default_factory=list)       # PyBuda's op_names_to_chip_break
    default_dram_parameters: bool | None = None
    enable_t_streaming: bool = True
    manual_t_streaming: bool = False
    # ---- debugging and reports ----
    op_intermediates_to_save: list[str] = field(default_factory=list)
    enable_reportify: bool = False                             # write a Reportify web report (PYBUDA_REPORTIFY=1)
    check_finite: str = "error"       # inf/NaN the device made from finite inputs: "error", "warn", "off" (finite_check.py)
    # ---- generated code and cache ----
    generated_modules_dir: str = "generated_modules"
    tvm_graph_store_path: str = ""
    tvm_graph_load_path: str = ""
    # ---- generation: past-cache inputs the device keeps between steps (runtime/generation.py) ----
    loopback_outputs: dict[str, int] = field(default_factory=dict)  # {input name: output index}
    enable_link_past_cache_ios: bool = False                        # link by name/shape instead
    # ---- accepted as in PyBuda, no effect on the simulator (see NO_EFFECT and docs/compiler_config.md) ----
    enable_training: bool = False
    enable_recompute: bool = False
    match_subgraph_patterns: int | None = None
    scheduler_policy: str = "ModuleInputsBFS"
    enable_consteval: bool = True
    enable_auto_fusing: bool = True
    compile_subgraphs: bool = False
    graph_solver_self_cut_type: str = "FastCut"
    use_interactive_placer: bool = True
    enable_enumerate_u_kt: bool = True
    compile_depth: object = None
    enable_tvm_dropout: bool = False
    enable_tvm_unsupported_ops: bool = False
    enable_tvm_constant_prop: bool = False
    convert_framework_params_to_tvm: bool = True
    enable_xla_jax_convert: bool = False
    enable_tvm_jax_freeze_large_model: bool = True
    framework_model_output_names: list[str] = field(default_factory=list)
    tvm_constnat_prop_mask: set[str] = field(default_factory=set)   # sic: PyBuda's spelling
    compile_tvm_to_python: bool = True
    retain_tvm_python_files: bool = False
    tvm_module_to_num_patterns: dict[str, int] = field(default_factory=dict)
    enable_conv_prestride: bool = True
    max_pool_add_sub_surround: bool = False
    max_pool_add_sub_surround_value: float = 1.0
    enable_device_tilize: bool = False
    enable_forked_dram_inputs: bool = False
    chip_placement_policy: str = "MMIO_LAST"
    op_names_dont_fuse: list[str] = field(default_factory=list)
    op_names_manual_fuse: list[str] = field(default_factory=list)
    placer_op_overrides: list = field(default_factory=list)
    enable_broadcast_splitting: bool = False
    performance_trace: object = None
    enable_auto_transposing_placement: bool = False
    fracture_groups: list = field(default_factory=list)
    conv_multi_op_fracture_factor_override: dict[str, int] = field(default_factory=dict)
    enable_single_buffer_fallback: bool = False
    device_mode: DeviceMode = DeviceMode.CompileAndRun
    backend_opt_level: int = 4
    backend_output_dir: str = ""
    backend_device_descriptor_path: str = ""
    backend_cluster_descriptor_path: str = ""
    backend_runtime_params_path: str = ""
    backend_runtime_args: str = ""
    store_backend_db_to_yaml: bool = False
    input_queues_on_host: bool = True
    output_queues_on_host: bool = True
    manual_dram_queue_placement: dict = field(default_factory=dict)
    buffering_nops_to_insert: dict = field(default_factory=dict)
    insert_queues: list = field(default_factory=list)
    scheduler_constraints: list[list[str]] = field(default_factory=list)
    paddings: dict[str, bool] = field(default_factory=dict)
    tti_dump_format: object = None
    dram_placement_algorithm: object = None

    def __setattr__(self, name: str, value) -> None:
        if name not in _KNOWN:
            close = difflib.get_close_matches(name, sorted(_KNOWN), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise AttributeError(f"CompilerConfig has no option {name!r}{hint} "
                                 "(every option is listed in docs/compiler_config.md)")
        check = _CHECKS.get(name)
        object.__setattr__(self, name, check(value) if check else value)

    # ---- PyBuda's spellings of fields we hold under another name ----
    @property
    def default_accumulate_df(self) -> DataFormat:
        return self.accumulate_df

    @default_accumulate_df.setter
    def default_accumulate_df(self, value) -> None:
        self.accumulate_df = DataFormat.Float16_b if value is None else DataFormat.parse(value)

    @property
    def op_names_to_epoch_break(self) -> list:
        return self.epoch_breaks

    @op_names_to_epoch_break.setter
    def op_names_to_epoch_break(self, value) -> None:
        self.epoch_breaks = list(value)

    @property
    def op_names_to_chip_break(self) -> list:
        return self.chip_breaks

    @op_names_to_chip_break.setter
    def op_names_to_chip_break(self, value) -> None:
        self.chip_breaks = list(value)

    @property
    def amp_properties(self) -> list[MixedPrecisionRule]:
        return self.mixed_precision

    @property
    def dram_parameter_overrides(self) -> dict[str, bool]:
        """op -> force_dram_parameters, from override_dram_parameters (read by the perf model)."""
        return {op: o["force_dram_parameters"] for op, o in self.balancer_op_overrides.items()
                if "force_dram_parameters" in o}

    @property
    def harvesting_mask(self) -> int:
        return sum(1 << r for r in self.harvested_rows or ())

    @harvesting_mask.setter
    def harvesting_mask(self, mask: int) -> None:
        self.harvested_rows = [r for r in range(int(mask).bit_length()) if mask >> r & 1] or None

    # ---- PyBuda's methods ----
    def add_cpu_fallback_ops(self, ops) -> None:
        self.cpu_fallback_ops |= {ops} if isinstance(ops, str) else set(ops)

    def remove_cpu_fallback_ops(self, ops) -> None:
        self.cpu_fallback_ops -= {ops} if isinstance(ops, str) else set(ops)

    def place_on_new_epoch(self, op_names) -> None:
        """Start a new epoch at the first of `op_names` in the schedule (perf model placement)."""
        self.epoch_breaks.append(_op_names(op_names, "place_on_new_epoch"))

    def place_on_new_chip(self, op_names) -> None:
        self.chip_breaks.append(_op_names(op_names, "place_on_new_chip"))

    def dont_fuse(self, op_names) -> None:
        self.op_names_dont_fuse.extend([op_names] if isinstance(op_names, str) else op_names)

    def manual_fuse(self, op_names) -> None:
        self.op_names_manual_fuse.extend([op_names] if isinstance(op_names, str) else op_names)

    def place_queue_to_chip_dram(self, dram_queue: str, *, chip_id=None, channel=None) -> None:
        self.manual_dram_queue_placement[dram_queue] = (chip_id, channel)

    def balancer_op_override(self, op_name: str, attribute: str, value) -> None:
        """Override one balancer decision for an op; grid_shape pins its grid in the perf model."""
        if attribute not in OP_OVERRIDE_ATTRIBUTES:
            close = difflib.get_close_matches(attribute, OP_OVERRIDE_ATTRIBUTES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"balancer_op_override({op_name!r}): unknown attribute {attribute!r}{hint} "
                             f"(known: {', '.join(OP_OVERRIDE_ATTRIBUTES)})")
        value = _check_op_override(op_name, attribute, value)
        entry = self.balancer_op_overrides.setdefault(op_name, {})
        if isinstance(value, dict):
            value = {**(entry.get(attribute) or {}), **value}
        entry[attribute] = value
        if attribute == "grid_shape":
            self.op_size_overrides[op_name] = value

    def enable_amp_light(self, level: int = 1) -> None:
        """PyBuda's AMP light: lower-precision matmul weights (same as PYBUDA_AMP_LIGHT=level)."""
        if level not in (0, 1, 2, 3):
            raise ValueError(f"enable_amp_light: level must be 0, 1, 2 or 3, got {level!r}")
        self.amp_light_level = level

    def save_intermediates(self) -> bool:
        return bool(self.op_intermediates_to_save)

    # ---- what the compiler reads ----
    def numerics(self) -> NumericsConfig:
        light = AMP_LIGHT.get_int() if AMP_LIGHT.get() not in ("", "0") else self.amp_light_level
        return NumericsConfig(
            default_df_override=self.default_df_override,
            accumulate_df=self.accumulate_df,
            math_fidelity=self.default_math_fidelity,
            fp32_fallback=self.fp32_fallback,
            rules=amp_rules(self.amp_level or 0, self.default_df_override) + amp_light_rules(light)
            + list(self.mixed_precision),
        )

    def result_key(self) -> dict:
        """Every field that can change compiled results, JSON-able (paths excluded), for cache keys."""
        out = {}
        for f in fields(self):
            if f.name in _NOT_RESULT_FIELDS or f.name in NO_EFFECT:
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


def _op_names(op_names, what: str):
    if isinstance(op_names, str):
        return [op_names]
    if isinstance(op_names, (list, tuple)) and all(isinstance(n, str) for n in op_names):
        return list(op_names)
    raise TypeError(f"{what}: expected an op name or a list of op names, got {op_names!r}")


def _check_choice(name: str, choices):
    def check(value):
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"CompilerConfig.{name}={value!r} is not valid{hint} (one of {', '.join(choices)})")
        return value
    return check


def _check_op_override(op_name: str, attribute: str, value):
    if attribute in ("grid_shape", "t_stream_shape"):
        try:
            rows, cols = (int(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"{attribute} for {op_name!r} must be a (rows, columns) pair, got {value!r}") from None
        if rows < 1 or cols < 1:
            raise ValueError(f"{attribute} for {op_name!r} must be positive, got {(rows, cols)}")
        if attribute == "t_stream_shape" and rows > 1 and cols > 1:
            raise ValueError(f"t_stream_shape for {op_name!r}: streaming is along one dimension at a time, so rows or "
                             f"columns must be 1, got {(rows, cols)}")
        return rows, cols
    if attribute == "t_stream_dir":
        direction = "n" if value is None else str(value).lower()
        if direction not in ("n", "r", "c", "rz", "cz"):
            raise ValueError(f"t_stream_dir for {op_name!r} must be one of n, r, c, rz, cz, got {value!r}")
        return direction
    return value


_CHECKS = {
    "balancer_policy": _check_choice("balancer_policy", BALANCER_POLICIES),
    "graph_solver_self_cut_type": _check_choice("graph_solver_self_cut_type", SELF_CUT_TYPES),
    "amp_level": check_amp_level,
    "default_df_override": lambda v: None if v is None else DataFormat.parse(v),
    "accumulate_df": DataFormat.parse,
    "default_math_fidelity": MathFidelity.parse,
    "check_finite": lambda v: _parse_check_finite(v),
}


def _parse_check_finite(value) -> str:
    from .finite_check import parse_mode   # (finite_check runs ops: imported when first needed)

    return parse_mode(value)

# Accepted for PyBuda code, change nothing on the simulator (docs/compiler_config.md says why).
NO_EFFECT = frozenset({
    "enable_training", "enable_recompute", "match_subgraph_patterns", "scheduler_policy", "enable_consteval",
    "enable_auto_fusing", "compile_subgraphs", "graph_solver_self_cut_type", "use_interactive_placer",
    "enable_enumerate_u_kt", "compile_depth", "enable_tvm_dropout",
    "enable_tvm_unsupported_ops", "enable_tvm_constant_prop", "convert_framework_params_to_tvm",
    "enable_xla_jax_convert", "enable_tvm_jax_freeze_large_model", "framework_model_output_names",
    "tvm_constnat_prop_mask", "compile_tvm_to_python", "retain_tvm_python_files", "tvm_module_to_num_patterns",
    "enable_conv_prestride", "max_pool_add_sub_surround", "max_pool_add_sub_surround_value",
    "enable_device_tilize", "enable_forked_dram_inputs", "chip_placement_policy", "op_names_dont_fuse",
    "op_names_manual_fuse", "placer_op_overrides", "enable_broadcast_splitting", "performance_trace",
    "enable_auto_transposing_placement", "fracture_groups", "conv_multi_op_fracture_factor_override",
    "enable_single_buffer_fallback", "device_mode", "backend_opt_level", "backend_output_dir",
    "backend_device_descriptor_path", "backend_cluster_descriptor_path", "backend_runtime_params_path",
    "backend_runtime_args", "store_backend_db_to_yaml", "input_queues_on_host", "output_queues_on_host",
    "manual_dram_queue_placement", "buffering_nops_to_insert", "insert_queues", "scheduler_constraints", "paddings",
    "tti_dump_format", "dram_placement_algorithm",
})

# Where files go, not what they contain.
_NOT_RESULT_FIELDS = frozenset({"generated_modules_dir", "tvm_graph_store_path", "tvm_graph_load_path",
                                "op_intermediates_to_save", "enable_reportify", "check_finite",
                                "loopback_outputs", "enable_link_past_cache_ios"})  # links, not code

_KNOWN = frozenset(f.name for f in fields(CompilerConfig)) | frozenset(
    name for name, member in vars(CompilerConfig).items() if isinstance(member, property) and member.fset)

_global_config = CompilerConfig()


def _get_global_compiler_config() -> CompilerConfig:
    return _global_config


def _reset_global_compiler_config() -> None:
    global _global_config
    _global_config = CompilerConfig()
