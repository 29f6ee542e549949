"""PyBuda's runtime API on the simulated device: devices, the pipeline that runs them, queues and
parameters. The device model (tensors, formats, fidelity, kernels, perf) lives beside this package
and never imports it."""

from .devices import CPUDevice, Device, TTDevice
from .generation import run_generate
from .parameters import get_parameter_checkpoint, update_device_parameters
from .pipeline import (detect_available_devices, initialize_pipeline, run_forward, run_inference, run_module,
                       shutdown)
from .queues import get_intermediates_queue
from .training import get_parameter_gradients, run_backward, run_optimizer, run_training

__all__ = ["CPUDevice", "Device", "TTDevice", "detect_available_devices", "get_intermediates_queue",
           "get_parameter_checkpoint", "initialize_pipeline", "run_forward", "run_generate", "run_inference",
           "run_module", "shutdown", "update_device_parameters", "get_parameter_gradients", "run_backward", "run_optimizer", "run_training"]
