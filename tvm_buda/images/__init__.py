"""TT device images on the tvm_buda side: writing a CompiledModel into a TTI and rebuilding it on load.

Importing this package installs both as the runtime's image hooks (buda_runtime_sim never imports TVM).
"""

from buda_runtime_sim.runtime.images import ImageError, TTDeviceImage, set_image_hooks

from .build import build_image
from .load import load_model

set_image_hooks(load_model=load_model, build=build_image)

__all__ = ["ImageError", "TTDeviceImage", "build_image", "load_model"]
