"""`pybuda.config`: the global compiler configuration."""

from buda_runtime_sim.config import CompilerConfig, _get_global_compiler_config, _reset_global_compiler_config

__all__ = ["CompilerConfig", "_get_global_compiler_config", "_reset_global_compiler_config"]
