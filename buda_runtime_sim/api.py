"""PyBuda's Python runtime API on the simulator: run_inference, shutdown and friends."""

from __future__ import annotations

import queue

from . import devices
from .tensor import Tensor


def _wrap(outputs) -> list[Tensor]:
    return [o if isinstance(o, Tensor) else Tensor.from_array(o) for o in outputs]


def run_inference(module=None, inputs=(), input_count: int = 1, output_queue: queue.Queue | None = None,
                  _sequential: bool = False, _perf_trace: bool = False, _verify_cfg=None, **legacy):
    """Run inputs through the device pipeline; returns the queue the outputs (lists of Tensors) go to.

    Accepts the older spelling `num_inputs=` / `sequential=` too.
    """
    unknown = set(legacy) - {"num_inputs", "sequential"}
    if unknown:
        raise TypeError(f"run_inference got unexpected arguments: {sorted(unknown)}")
    input_count = legacy.get("num_inputs", input_count)
    if module is not None:
        devices.TTDevice("tt0", module=module)
    pipeline = [d for d in devices.registered_devices() if d.active]
    if not pipeline:
        raise RuntimeError("run_inference: no device has been created; create a TTDevice and place a module on it")
    if not any(d.modules for d in pipeline):
        raise RuntimeError("run_inference: no module has been placed on any device")
    first = pipeline[0]
    for item in inputs:
        first.push_to_inputs(item)
    count = len(inputs) if inputs else input_count
    if len(first.input_queue) < count:
        raise RuntimeError(
            f"run_inference: {count} input(s) requested but {len(first.input_queue)} queued on {first.name}; "
            "push inputs with device.push_to_inputs(...) or pass inputs=[...]"
        )
    output_queue = output_queue if output_queue is not None else queue.Queue()
    for _ in range(count):
        values = first.input_queue.popleft()
        for device in pipeline:
            if device.modules:
                values = device.run_modules(values)
        output_queue.put(_wrap(values))
    return output_queue


def run_module(module, args):
    """`Module.run(*args)`: place on a fresh TTDevice, run once, return the outputs."""
    shutdown()
    device = devices.TTDevice("tt0", module=module)
    device.push_to_inputs(args)
    try:
        return tuple(run_inference().get())
    finally:
        shutdown()


def shutdown() -> None:
    """Stop all devices and forget the pipeline."""
    for device in devices.registered_devices():
        device.shutdown_device()
        device.remove_modules()
    devices.clear_devices()


def detect_available_devices() -> list:
    """No Tenstorrent hardware is ever attached to the simulator."""
    return []
