"""`pybuda.schedulers`: learning-rate schedules (see buda_runtime_sim.runtime.schedulers)."""

from buda_runtime_sim.runtime.schedulers import LearningRateScheduler, LinearWarmup

__all__ = ["LearningRateScheduler", "LinearWarmup"]
