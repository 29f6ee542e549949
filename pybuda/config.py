"""`pybuda.config`: the global compiler configuration and PyBuda's override functions."""

from buda_runtime_sim.config import CompilerConfig, _get_global_compiler_config, _reset_global_compiler_config
from buda_runtime_sim.options import (
    add_schedule_constraint,
    configure_mixed_precision,
    insert_buffering_nop,
    insert_fracture_group,
    override_dram_parameters,
    override_dram_queue_placement,
    override_fracture_factor,
    override_input_buffer_multiplier,
    override_multi_op_fracture_factor,
    override_op_placement,
    override_op_size,
    override_t_stream_dir,
    override_t_stream_shape,
    override_u_kt,
    set_auto_transposing_placement,
    set_chip_break,
    set_configuration_options,
    set_epoch_break,
    set_num_repeated_patterns,
)

__all__ = ["CompilerConfig", "_get_global_compiler_config", "_reset_global_compiler_config", "add_schedule_constraint",
           "configure_mixed_precision", "insert_buffering_nop", "insert_fracture_group", "override_dram_parameters",
           "override_dram_queue_placement", "override_fracture_factor", "override_input_buffer_multiplier",
           "override_multi_op_fracture_factor", "override_op_placement", "override_op_size", "override_t_stream_dir",
           "override_t_stream_shape", "override_u_kt", "set_auto_transposing_placement", "set_chip_break",
           "set_configuration_options", "set_epoch_break", "set_num_repeated_patterns"]
