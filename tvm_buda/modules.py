"""PyBuda's framework module wrappers: name a framework model so devices can compile it."""

from __future__ import annotations

from buda_runtime_sim.module import Module


class FrameworkModule(Module):
    """A framework model placed on a TT device is compiled by tvm_buda on first use."""

    framework = "unknown"

    def __init__(self, name: str, module):
        super().__init__(name)
        self.framework_module = module

    def compile_for_device(self, sample_inputs, config):
        """Called by the simulated TTDevice: compile for the buda backend."""
        from .compiled_model import compile_model

        return compile_model(self, sample_inputs, config=config, name=self.name)

    def cpu_eval(self, *inputs):
        """Run the framework model itself (CPUDevice, and the golden reference)."""
        return self.framework_module(*inputs)


class PyTorchModule(FrameworkModule):
    """`PyTorchModule(name, torch.nn.Module)`: lowered to PyBuda when placed on a TT device."""

    framework = "pytorch"

    def __init__(self, name: str, module, redirect_forward: bool = True):
        import torch

        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"PyTorchModule {name!r}: expected a torch.nn.Module, got {type(module).__name__}")
        super().__init__(name, module)

    def forward(self, *args, **kwargs):
        import torch

        with torch.no_grad():
            return self.framework_module(*args, **kwargs)

    def cpu_eval(self, *inputs):
        return self.forward(*inputs)
