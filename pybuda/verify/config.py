"""`pybuda.verify.config`, where PyBuda code imports VerifyConfig and TestKind from."""

from buda_runtime_sim.runtime.verification import TestKind, VerifyConfig

__all__ = ["TestKind", "VerifyConfig"]
