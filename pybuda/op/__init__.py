"""`pybuda.op`: the op set of the simulated device."""

from buda_runtime_sim.op import *  # noqa: F401,F403
from buda_runtime_sim.op import __all__  # noqa: F401

from . import loss, nn  # noqa: E402,F401
