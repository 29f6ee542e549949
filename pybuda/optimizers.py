"""`pybuda.optimizers`: SGD, Adam, AdamW, LAMB (see buda_runtime_sim.runtime.optimizers)."""

from buda_runtime_sim.runtime.optimizers import LAMB, SGD, Adam, AdamW, Optimizer

__all__ = ["LAMB", "SGD", "Adam", "AdamW", "Optimizer"]
