"""Devices of the simulated system: TTDevice (the tile accelerator) and CPUDevice (the host).

Devices form a pipeline in creation order; each device runs its modules in placement order and
feeds its outputs to the next device. Framework modules placed on a TTDevice are compiled the
first time they run (the module provides `compile_for_device`); PyBudaModules run directly.
"""

from __future__ import annotations

import collections
import warnings

from . import context
from .config import _get_global_compiler_config
from .dataformat import DataFormat
from .enums import BackendDevice, BackendType, DeviceMode
from .module import Module, PyBudaModule
from .tensor import Tensor

_pipeline: list["Device"] = []
_silicon_warned = False


def registered_devices() -> list["Device"]:
    return list(_pipeline)


def clear_devices() -> None:
    _pipeline.clear()


class Device:
    def __init__(self, name: str, module=None):
        self.name = name
        self.modules: list[Module] = []
        self.input_queue: collections.deque = collections.deque()
        self.active = True
        _pipeline.append(self)
        if module is not None:
            self.place_module(module)

    def place_module(self, module) -> None:
        modules = module if isinstance(module, (list, tuple)) else [module]
        for m in modules:
            if not isinstance(m, Module):
                raise TypeError(f"{self.name}: place_module expects PyBuda modules, got {type(m).__name__}")
            m.device = self
            self.modules.append(m)

    def remove_modules(self) -> None:
        for m in self.modules:
            m.device = None
        self.modules = []

    def push_to_inputs(self, *tensors) -> None:
        """Queue one input: tensors as separate arguments, one tuple/list, or one dict (keyword inputs)."""
        if len(tensors) == 1 and isinstance(tensors[0], (tuple, list, dict)):
            tensors = tensors[0]
        self.input_queue.append(tensors)

    def run_modules(self, inputs):
        values = inputs
        for module in self.modules:
            values = self.run_module(module, values)
        return values

    def run_module(self, module, inputs):
        raise NotImplementedError

    def shutdown_device(self) -> None:
        self.input_queue.clear()
        self.active = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, modules={[m.name for m in self.modules]})"


class TTDevice(Device):
    """A simulated Tenstorrent device (Grayskull or Wormhole_B0)."""

    def __init__(self, name: str, num_chips: int | None = None, chip_ids=None, arch: BackendDevice | None = None,
                 devtype: BackendType | None = None, device_mode: DeviceMode | None = None, optimizer=None,
                 scheduler=None, fp32_fallback: DataFormat = DataFormat.Float16_b, mp_context=None, module=None):
        self.arch = arch or BackendDevice.Grayskull
        self.devtype = devtype or BackendType.Golden
        self.device_mode = device_mode or DeviceMode.CompileAndRun
        self.num_chips = num_chips or 1
        self.chip_ids = chip_ids or list(range(self.num_chips))
        self.fp32_fallback = DataFormat(fp32_fallback)
        self._compiled: dict[int, object] = {}
        if self.devtype == BackendType.Silicon:
            _warn_no_silicon()
        super().__init__(name, module)

    def _numerics(self):
        numerics = _get_global_compiler_config().numerics()
        numerics.fp32_fallback = self.fp32_fallback
        return numerics

    def run_module(self, module, inputs):
        args, kwargs = _split(inputs)
        if isinstance(module, PyBudaModule):
            numerics = self._numerics()
            input_df = numerics.default_df_override or numerics.fp32_fallback
            with context.use(context.ExecutionContext(numerics=numerics)):
                tensors = [x if isinstance(x, Tensor) else Tensor.from_array(x, input_df) for x in args]
                outputs = module(*tensors, **kwargs)
            return _as_tuple(outputs)
        compiled = self._compiled.get(id(module))
        if compiled is None:
            config = _get_global_compiler_config().copy()
            config.fp32_fallback = self.fp32_fallback
            compiled = module.compile_for_device(_host_values(args), config)
            self._compiled[id(module)] = compiled
        return _as_tuple(compiled.run(*_host_values(args)))

    def compiled_module(self, module):
        return self._compiled.get(id(module))


class CPUDevice(Device):
    """The host: framework modules run in their own framework."""

    def __init__(self, name: str, optimizer_f=None, scheduler_f=None, mp_context=None, retain_backward_graph=False,
                 module=None, input_dtypes=None):
        super().__init__(name, module)

    def run_module(self, module, inputs):
        args, kwargs = _split(inputs)
        if not hasattr(module, "cpu_eval"):
            raise TypeError(f"{self.name}: module {module.name} cannot run on a CPUDevice (no framework model)")
        return _as_tuple(module.cpu_eval(*_host_values(args), **kwargs))


def _split(inputs):
    if isinstance(inputs, dict):
        return (), dict(inputs)
    return tuple(inputs), {}


def _as_tuple(outputs) -> tuple:
    return tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)


def _host_values(values):
    """Device tensors become torch tensors when they cross to the host."""
    return tuple(v.value() if isinstance(v, Tensor) else v for v in values)


def _warn_no_silicon() -> None:
    global _silicon_warned
    if not _silicon_warned:
        _silicon_warned = True
        warnings.warn("BackendType.Silicon requested but no Tenstorrent hardware is present: running on the simulator",
                      RuntimeWarning, stacklevel=3)
