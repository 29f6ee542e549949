"""`pybuda.verify.backend`, where PyBuda code imports verify_module from."""

from buda_runtime_sim.runtime.verification import verify_module

__all__ = ["verify_module"]
