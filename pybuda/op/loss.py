"""`pybuda.op.loss`: loss modules for place_loss_module on a TTDevice."""

from buda_runtime_sim.op.loss import *  # noqa: F401,F403
from buda_runtime_sim.op.loss import __all__  # noqa: F401
