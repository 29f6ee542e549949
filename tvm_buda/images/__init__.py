"""TT device images on the tvm_buda side: writing a CompiledModel into a TTI and rebuilding it on load.

Importing this package installs both as the runtime's image hooks (buda_runtime_sim never imports
TVM). Loading needs TVM's runtime only; the writer (build.py, which reads the Relax module) is
imported when an image is first written.
"""

from buda_runtime_sim.runtime.images import ImageError, TTDeviceImage, set_image_hooks

from .load import load_model


def build_image(*args, **kwargs):
    """Write a CompiledModel as a TTI (build.build_image)."""
    from .build import build_image as build

    return build(*args, **kwargs)


set_image_hooks(load_model=load_model, build=build_image)

__all__ = ["ImageError", "TTDeviceImage", "build_image", "load_model"]
