"""The one pipeline's state, shared by the calls that run it (runtime/pipeline.py, training.py,
generation.py): its lock, output queue, d2d queues, whether it is initialized, and its stages."""

from __future__ import annotations

import functools
import threading

from ..tensor import Tensor
from . import device_pipeline, registry

state = {"output_queue": None, "initialized": False, "d2d_fwd_queues": []}
lock = threading.RLock()  # one pipeline: a call's inputs, run and outputs are not interleaved with another's


def serialised(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with lock:
            return fn(*args, **kwargs)

    return wrapper


def wrap(outputs) -> list[Tensor]:
    return [o if isinstance(o, Tensor) else Tensor.from_array(o) for o in outputs]


def stages() -> list:
    """The devices with modules, in creation order (runtime/device_pipeline.py)."""
    if not any(d.active for d in registry.registered_devices()):
        raise RuntimeError("no device has been created (or pybuda was shut down); create a TTDevice and place a "
                           "module on it, or pass module= to run_inference")
    pipeline = device_pipeline.stages(registry.registered_devices())
    if not pipeline:
        raise RuntimeError("no module has been placed on any device; call device.place_module(...)")
    return pipeline


def reset() -> None:
    state.update(output_queue=None, initialized=False, d2d_fwd_queues=[])
