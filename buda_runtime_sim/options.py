"""PyBuda's configuration API: set_configuration_options, configure_mixed_precision, placement hints.

Every option of the API reference is accepted. Options that change simulated numbers or
reports are honoured; the rest are recorded in `CompilerConfig.other_options` and shown in reports.
"""

from __future__ import annotations

from .config import _get_global_compiler_config
from .dataformat import DataFormat, MathFidelity
from .numerics_config import MixedPrecisionRule
from .perf.boards import BOARDS, validate_harvested_rows

# option name -> CompilerConfig field it sets (None: recorded only)
_HONOURED = {
    "default_df_override": "default_df_override",
    "accumulate_df": "accumulate_df",
    "math_fidelity": "default_math_fidelity",
    "amp_level": "amp_level",
    "harvested_rows": "harvested_rows",
    "device_config": "device_config",
    "op_intermediates_to_save": "op_intermediates_to_save",
    "place_on_one_row": "place_on_one_row",
    "enable_stable_softmax": "enable_stable_softmax",
}
_RECORDED = (
    "enable_recompute", "balancer_policy", "enable_t_streaming", "manual_t_streaming", "enable_consteval",
    "performance_trace", "backend_opt_level", "backend_output_dir", "backend_device_descriptor_path",
    "backend_cluster_descriptor_path", "backend_runtime_params_path", "backend_runtime_args", "enable_auto_fusing",
    "enable_conv_prestride", "store_backend_db_to_yaml", "input_queues_on_host", "output_queues_on_host",
    "enable_auto_transposing_placement", "use_interactive_placer", "enable_enumerate_u_kt", "enable_device_tilize",
    "dram_placement_algorithm", "chip_placement_policy", "enable_forked_dram_inputs",
)
KNOWN_OPTIONS = tuple(_HONOURED) + _RECORDED
DEVICE_CONFIGS = tuple(sorted(BOARDS))


def _validate(name: str, value):
    if name in ("default_df_override", "accumulate_df"):
        return DataFormat.parse(value)
    if name == "math_fidelity":
        return MathFidelity.parse(value)
    if name == "amp_level":
        if value not in (0, 1):
            raise ValueError(f"set_configuration_options: amp_level must be 0 or 1, got {value!r}")
        return int(value)
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
        value = _validate(name, value)
        if name in _HONOURED:
            setattr(config, _HONOURED[name], value)
        else:
            config.other_options[name] = value


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
    rows, cols = (int(v) for v in grid_size)
    if rows <= 0 or cols <= 0:
        raise ValueError(f"override_op_size({op_name!r}): grid size must be positive, got {grid_size}")
    _get_global_compiler_config().op_size_overrides[op_name] = (rows, cols)


def _names(op_names) -> list[str]:
    return [op_names] if isinstance(op_names, str) else [str(n) for n in op_names]


def set_epoch_break(op_names) -> None:
    _get_global_compiler_config().epoch_breaks.extend(_names(op_names))


def set_chip_break(op_names) -> None:
    _get_global_compiler_config().chip_breaks.extend(_names(op_names))
