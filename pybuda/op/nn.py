"""`pybuda.op.nn`: normalisation ops."""

from buda_runtime_sim.op.nn import *  # noqa: F401,F403
from buda_runtime_sim.op.nn import __all__  # noqa: F401
