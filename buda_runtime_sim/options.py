"""PyBuda's configuration API: set_configuration_options, configure_mixed_precision, op overrides.

Every option and override function of PyBuda's `pybuda.config` is accepted; each sets the
CompilerConfig field PyBuda's own sets. Which of them change anything on the simulator or in the
perf model: docs/compiler_config.md.
"""

from __future__ import annotations

from .config import _get_global_compiler_config
from .dataformat import DataFormat, MathFidelity
from .numerics_config import MixedPrecisionRule, check_amp_level
from .perf.boards import BOARDS, validate_harvested_rows

# set_configuration_options option -> the CompilerConfig field it sets
_FIELD_OF = {
    "enable_recompute": "enable_recompute", "balancer_policy": "balancer_policy",
    "place_on_one_row": "place_on_one_row", "enable_t_streaming": "enable_t_streaming",
    "manual_t_streaming": "manual_t_streaming", "enable_consteval": "enable_consteval",
    "default_df_override": "default_df_override", "accumulate_df": "accumulate_df",
    "math_fidelity": "default_math_fidelity", "performance_trace": "performance_trace",
    "backend_opt_level": "backend_opt_level", "backend_output_dir": "backend_output_dir",
    "backend_device_descriptor_path": "backend_device_descriptor_path",
    "backend_cluster_descriptor_path": "backend_cluster_descriptor_path",
    "backend_runtime_params_path": "backend_runtime_params_path", "backend_runtime_args": "backend_runtime_args",
    "enable_auto_fusing": "enable_auto_fusing", "enable_conv_prestride": "enable_conv_prestride",
    "enable_stable_softmax": "enable_stable_softmax", "amp_level": "amp_level", "harvested_rows": "harvested_rows",
    "store_backend_db_to_yaml": "store_backend_db_to_yaml", "input_queues_on_host": "input_queues_on_host",
    "output_queues_on_host": "output_queues_on_host",
    "enable_auto_transposing_placement": "enable_auto_transposing_placement",
    "use_interactive_placer": "use_interactive_placer", "op_intermediates_to_save": "op_intermediates_to_save",
    "enable_enumerate_u_kt": "enable_enumerate_u_kt", "enable_device_tilize": "enable_device_tilize",
    "dram_placement_algorithm": "dram_placement_algorithm", "chip_placement_policy": "chip_placement_policy",
    "enable_forked_dram_inputs": "enable_forked_dram_inputs", "device_config": "device_config",
    # the advanced guide's spellings of the same two options
    "default_accumulate_df": "accumulate_df", "default_math_fidelity": "default_math_fidelity",
}
KNOWN_OPTIONS = tuple(_FIELD_OF)
DEVICE_CONFIGS = tuple(sorted(BOARDS))


def _validate(name: str, value):
    if name in ("default_df_override", "accumulate_df", "default_accumulate_df"):
        return DataFormat.parse(value)
    if name in ("math_fidelity", "default_math_fidelity"):
        return MathFidelity.parse(value)
    if name == "amp_level":
        try:
            return check_amp_level(value)
        except ValueError as exc:
            raise ValueError(f"set_configuration_options: {exc}") from None
    if name == "backend_opt_level" and value not in (0, 1, 2, 3, 4):
        raise ValueError(f"set_configuration_options: backend_opt_level must be 0-4, got {value!r}")
    if name == "harvested_rows":
        rows = [int(r) for r in (value[0] if value and isinstance(value[0], (list, tuple)) else value)]
        try:
            return list(validate_harvested_rows(rows))
        except ValueError as exc:
            raise ValueError(f"set_configuration_options: {exc}") from None
    if name == "device_config":
        if value not in DEVICE_CONFIGS:
            raise ValueError(f"set_configuration_options: device_config {value!r} is unknown; expected one of {DEVICE_CONFIGS}")
        return value
    if name == "op_intermediates_to_save":
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise TypeError("set_configuration_options: op_intermediates_to_save must be a list of op names")
        return list(value)
    return value


def set_configuration_options(**options) -> None:
    """Set global compile options (see the PyBuda API reference for each one). None leaves an option unchanged."""
    unknown = sorted(set(options) - set(KNOWN_OPTIONS))
    if unknown:
        raise TypeError(f"set_configuration_options: unknown option(s) {', '.join(unknown)}; "
                        f"known options are {', '.join(sorted(KNOWN_OPTIONS))}")
    config = _get_global_compiler_config()
    for name, value in options.items():
        if value is None:
            continue
        setattr(config, _FIELD_OF[name], _validate(name, value))


def configure_mixed_precision(op_type: str | None = None, name_regex: str | None = None, output_df=None,
                              accumulate_df=None, math_fidelity=None, input_df=None, **ignored) -> None:
    """Override formats and fidelity for ops matching `op_type` and/or `name_regex` (later calls win)."""
    if op_type is None and name_regex is None:
        raise ValueError("configure_mixed_precision: give op_type and/or name_regex to say which ops it applies to")
    if isinstance(input_df, dict):  # PyBuda's {operand_index: (df, ...)} form: one format for the weights
        input_df = next(iter(input_df.values()))
        input_df = input_df[0] if isinstance(input_df, (tuple, list)) else input_df
    rule = MixedPrecisionRule(
        op_type=op_type, name_regex=name_regex,
        output_df=DataFormat.parse(output_df) if output_df is not None else None,
        accumulate_df=DataFormat.parse(accumulate_df) if accumulate_df is not None else None,
        math_fidelity=MathFidelity.parse(math_fidelity) if math_fidelity is not None else None,
        input_df=DataFormat.parse(input_df) if input_df is not None else None,
    )
    _get_global_compiler_config().mixed_precision.append(rule)


def override_op_size(op_name: str, grid_size: tuple[int, int]) -> None:
    """Pin an op's grid (rows, columns) in the perf model's balancer."""
    _get_global_compiler_config().balancer_op_override(op_name, "grid_shape", grid_size)


def override_t_stream_shape(op_name: str, shape: tuple[int, int]) -> None:
    """Stream an op's output in (rows, 1) or (1, columns) slices (validated; see docs/compiler_config.md)."""
    _get_global_compiler_config().balancer_op_override(op_name, "t_stream_shape", shape)


def override_t_stream_dir(op_name: str, direction: str | None) -> None:
    _get_global_compiler_config().balancer_op_override(op_name, "t_stream_dir", direction)


def override_dram_parameters(op_name: str, force_dram_parameters: bool) -> None:
    """True: the op's weights stream from DRAM every run instead of being loaded into L1 once per epoch."""
    _get_global_compiler_config().balancer_op_override(op_name, "force_dram_parameters", bool(force_dram_parameters))


def override_u_kt(op_name: str, u_kt: int) -> None:
    _get_global_compiler_config().balancer_op_override(op_name, "u_kt", int(u_kt))


def override_fracture_factor(op_name: str, fracture_factor: int) -> None:
    _get_global_compiler_config().balancer_op_override(op_name, "fracture_factor", int(fracture_factor))


def override_input_buffer_multiplier(op_name: str, operand_index: int, *, multiplier: int) -> None:
    _get_global_compiler_config().balancer_op_override(op_name, "input_buffer_multiplier",
                                                        {int(operand_index): int(multiplier)})


def override_multi_op_fracture_factor(op_name: str, multi_op_fracture_factor: int) -> None:
    _get_global_compiler_config().conv_multi_op_fracture_factor_override[op_name] = int(multi_op_fracture_factor)


def override_op_placement(op_name: str, *, start=None, transpose_op: bool = False, chip_id=None,
                          spatial_epoch_break: bool = False, temporal_epoch_break: bool = False) -> None:
    """Recorded; an epoch break requested here does start a new epoch in the perf model."""
    config = _get_global_compiler_config()
    config.placer_op_overrides.append((op_name, {"start": start, "transpose_op": transpose_op, "chip_id": chip_id}))
    if temporal_epoch_break or spatial_epoch_break:
        config.place_on_new_epoch(op_name)


def override_dram_queue_placement(dram_queue: str, *, chip_id=None, channel=None) -> None:
    _get_global_compiler_config().place_queue_to_chip_dram(dram_queue, chip_id=chip_id, channel=channel)


def insert_fracture_group(nodes, chip_ids=()) -> None:
    _get_global_compiler_config().fracture_groups.append((list(nodes), chip_ids))


def insert_buffering_nop(src_op: str, dest_ops, *, hoist_tms: bool = True, nop_count: int = 1,
                         daisy_chain: bool = False) -> None:
    for dest in _names(dest_ops):
        _get_global_compiler_config().buffering_nops_to_insert[(src_op, dest)] = nop_count


def add_schedule_constraint(partial_ordering: list[str]) -> None:
    _get_global_compiler_config().scheduler_constraints.append(list(partial_ordering))


def set_num_repeated_patterns(module_name: str, num_patterns: int) -> None:
    _get_global_compiler_config().tvm_module_to_num_patterns[module_name] = int(num_patterns)


def set_auto_transposing_placement(is_enabled: bool) -> None:
    _get_global_compiler_config().enable_auto_transposing_placement = bool(is_enabled)


def _names(op_names) -> list[str]:
    return [op_names] if isinstance(op_names, str) else [str(n) for n in op_names]


def set_epoch_break(op_names) -> None:
    _get_global_compiler_config().place_on_new_epoch(op_names)


def set_chip_break(op_names) -> None:
    _get_global_compiler_config().place_on_new_chip(op_names)
