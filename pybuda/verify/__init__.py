"""`pybuda.verify`: check a module on the simulated device against its framework (PyBuda's rule)."""

from buda_runtime_sim.runtime.verification import (TestKind, VerificationError, VerifyConfig, verify_module,
                                                   verify_outputs)

from . import backend, config

__all__ = ["TestKind", "VerificationError", "VerifyConfig", "backend", "config", "verify_module", "verify_outputs"]
