"""PyBuda's public names, served by tvm-buda, so PyBuda code and generated modules run unchanged.

Simulator names import eagerly; names that need TVM (framework wrappers, compilation) load on
first use so a hand-written PyBudaModule never waits for TVM.
"""

from buda_runtime_sim import DataFormat, MathFidelity, Module, Parameter, PyBudaModule, Tensor
from buda_runtime_sim.runtime import (
    CPUDevice,
    TTDevice,
    detect_available_devices,
    get_intermediates_queue,
    get_parameter_checkpoint,
    get_parameter_gradients,
    initialize_pipeline,
    run_backward,
    run_forward,
    run_generate,
    run_inference,
    run_optimizer,
    run_training,
    shutdown,
    update_device_parameters,
)
from buda_runtime_sim.config import CompilerConfig
from buda_runtime_sim.runtime.images import TTDeviceImage, set_image_hooks
from buda_runtime_sim.enums import BackendDevice, BackendType, DeviceMode
from buda_runtime_sim.options import (
    configure_mixed_precision,
    override_op_size,
    set_chip_break,
    set_configuration_options,
    set_epoch_break,
)
from buda_runtime_sim.runtime.verification import VerifyConfig

from . import _C, config, op, optimizers, schedulers, verify
from buda_runtime_sim.runtime import trainers as _trainers

_FROM_TVM_BUDA = {"PyTorchModule", "TFModule", "TFGraphDefModule", "JaxModule", "OnnxModule", "TFLiteModule",
                  "compile_model", "build"}


def _load_image_model(image, entry):
    from tvm_buda.images import load_model

    return load_model(image, entry)


def _build_image(*args, **kwargs):
    from tvm_buda.images import build_image

    return build_image(*args, **kwargs)


set_image_hooks(load_model=_load_image_model, build=_build_image)  # tvm_buda is imported only when used


def _compile_pybuda_module(module, sample_inputs, config, input_grad_count=0):
    """Training a PyBudaModule: trace it into Relax and compile forward and backward (needs TVM)."""
    from tvm_buda.training.pybuda_trace import compile_pybuda_module

    return compile_pybuda_module(module, sample_inputs, config, input_grad_count)


_trainers.set_pybuda_module_compiler(_compile_pybuda_module)


def __getattr__(name):
    if name in _FROM_TVM_BUDA:
        import tvm_buda

        return getattr(tvm_buda, name)
    if name == "transformers":  # imports Hugging Face transformers, so only on first use
        import importlib

        return importlib.import_module("pybuda.transformers")
    raise AttributeError(f"module 'pybuda' has no attribute {name!r}")


__all__ = ["BackendDevice", "BackendType", "CPUDevice", "CompilerConfig", "DataFormat", "DeviceMode", "MathFidelity",
           "JaxModule", "Module", "OnnxModule", "Parameter", "PyBudaModule", "PyTorchModule", "TFGraphDefModule",
           "TFLiteModule", "TFModule", "TTDevice", "TTDeviceImage", "Tensor", "config",
           "configure_mixed_precision", "detect_available_devices", "get_intermediates_queue",
           "get_parameter_checkpoint", "get_parameter_gradients", "initialize_pipeline", "op", "optimizers",
           "override_op_size", "run_backward", "run_forward", "run_generate", "run_inference", "run_optimizer",
           "run_training",
           "schedulers", "set_chip_break", "set_configuration_options", "set_epoch_break", "shutdown",
           "update_device_parameters", "VerifyConfig", "verify", "_C"]
