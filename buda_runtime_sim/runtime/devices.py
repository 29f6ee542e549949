"""Devices of the simulated system: TTDevice (the tile accelerator) and CPUDevice (the host).

Devices form a pipeline in creation order; each device runs its modules in placement order and
feeds its outputs to the next device. Framework modules placed on a TTDevice are compiled the
first time they run (the module provides `compile_for_device`); PyBudaModules run directly.
"""

from __future__ import annotations

import collections
import inspect
import time
from collections.abc import Mapping
import warnings

import numpy as np

from .. import context, finite_check
from ..config import _get_global_compiler_config
from ..dataformat import DataFormat
from ..enums import BackendDevice, BackendType, DeviceMode
from ..fidelity import check_accumulate_df
from ..module import Module, PyBudaModule
from ..perf.boards import board_for_arch, get_board
from ..tensor import Tensor, _to_numpy
from . import chips, device_pipeline, generation, registry, subgraphs, telemetry
from .io_values import as_tuple, host_values, split_inputs
from .queues import intermediates_queue
from .registry import registered_devices  # noqa: F401  (the list of devices, also reachable from here)
from .training_device import TrainingDevice



def default_arch() -> BackendDevice:
    """A TTDevice's arch when neither arch= nor device_config is given: the installed board's
    (PYBUDA_DEVICE_CONFIG, a Wormhole n150 unless set); detect_available_devices() agrees."""
    return get_board(None).arch
_silicon_warned = False


class Device(TrainingDevice):
    keeps_past_cache = False  # whether generate steps write past caches into this device (runtime/generation.py)

    def __init__(self, name: str, module=None):
        self.name = name
        self.modules: list[Module] = []
        self.input_queue: collections.deque = collections.deque()
        self.active = True
        self._input_signature = None  # (names or None, [(shape, dtype)]) of the first pushed input
        if module is not None:
            self.place_module(module)
        registry.register(self)  # only a fully built device joins the pipeline

    # ---- placement ------------------------------------------------------------------------
    def place_module(self, module) -> None:
        self._check_active("place_module")
        modules = module if isinstance(module, (list, tuple)) else [module]
        for m in modules:  # all checked before any is placed
            if not isinstance(m, Module):
                raise TypeError(f"{self.name}: place_module expects PyBuda modules (PyBudaModule, PyTorchModule, ...), "
                                f"got {type(m).__name__}")
        for m in modules:
            m.device = self
            self.modules.append(m)

    def remove_modules(self) -> None:
        for m in self.modules:
            m.device = None
        self.modules = []

    # ---- inputs ---------------------------------------------------------------------------
    def push_to_inputs(self, *tensors) -> None:
        """Queue one input: tensors as arguments, one tuple/list, or one Mapping of named inputs (a dict, a
        tokenizer's BatchEncoding) matched by name to the module's forward arguments."""
        self._check_active("push_to_inputs")
        if not self.modules:
            raise RuntimeError(f"{self.name}: push_to_inputs before any module was placed; call place_module first")
        device_pipeline.check_first(self, registry.registered_devices())
        if len(tensors) == 1 and isinstance(tensors[0], (tuple, list, Mapping)):
            tensors = tensors[0]
        self._validate(tensors)
        self.input_queue.append(tensors)

    def _validate(self, tensors) -> None:
        names = list(tensors) if isinstance(tensors, Mapping) else None
        values = list(tensors.values()) if isinstance(tensors, Mapping) else list(tensors)
        if names is not None and hasattr(self.modules[0], "check_input_names"):
            self.modules[0].check_input_names(names)
        specs = []
        for i, v in enumerate(values):
            label = names[i] if names else f"#{i}"
            if not _is_tensor(v):
                raise TypeError(f"{self.name}: input {label} is a {type(v).__name__}, not a tensor")
            array = _to_numpy(v)
            specs.append((tuple(array.shape), str(array.dtype)))
        expected = self._expected_signature()
        if expected is None and self._input_signature is not None:
            expected = self._input_signature
        if expected is not None:
            _check_against(self.name, names, specs, expected)
        elif self._input_signature is None:
            self._input_signature = (names, specs)
        first = self.modules[0]
        if isinstance(first, PyBudaModule) and names is None:
            params = [p for p in inspect.signature(first.forward).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if not any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(first.forward).parameters.values()) \
                    and len(specs) != len(params):
                raise TypeError(f"{self.name}: module {first.name} takes {len(params)} input(s), {len(specs)} were pushed")

    def _expected_signature(self):
        """(names, [(shape, dtype)]) the first module was compiled for, if it has been compiled."""
        return None

    def _check_active(self, what: str) -> None:
        if not self.active:
            raise RuntimeError(f"{self.name}: {what} after shutdown; create a new device")

    # ---- running --------------------------------------------------------------------------
    def run_modules(self, inputs):
        values = inputs
        for module in subgraphs.active_modules(self):  # all placed modules unless set_active_subgraph chose one
            values = self.run_module(module, values)
        return values

    def run_module(self, module, inputs):
        raise NotImplementedError

    def get_parameters(self) -> dict:
        out = {}
        for m in self.modules:
            out.update(_module_parameters(self, m))
        return out

    def update_parameters(self, values: dict) -> None:
        for m in self.modules:
            _update_module_parameters(self, m, values)

    def shutdown_device(self) -> int:
        """Stop; returns how many queued inputs were discarded."""
        dropped = len(self.input_queue)
        self.input_queue.clear()
        self.active = False
        return dropped

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, modules={[m.name for m in self.modules]})"


class TTDevice(Device):
    """A simulated Tenstorrent device (Grayskull or Wormhole_B0)."""

    keeps_past_cache = True

    def __init__(self, name: str, num_chips: int | None = None, chip_ids=None, arch: BackendDevice | None = None,
                 devtype: BackendType | None = None, device_mode: DeviceMode | None = None, optimizer=None,
                 scheduler=None, fp32_fallback: DataFormat = DataFormat.Float16_b, mp_context=None, module=None):
        self._arch = _as_arch(arch) if arch is not None else None
        self.devtype = devtype or BackendType.Golden
        self.device_mode = device_mode or DeviceMode.CompileAndRun
        self.fp32_fallback = DataFormat.parse(fp32_fallback)
        self.optimizer, self.scheduler = optimizer, scheduler  # used when training (runtime.training)
        # CompilerConfig fields this device sets for its own compiles, over the global config: a
        # library placing programs (TTDeviceDecoder's cache links) must not touch the user's config.
        self.config_overrides: dict = {}
        self.compiled: dict[int, object] = {}  # id(module) -> CompiledModel
        self.name = name
        self.arch  # noqa: B018 - a conflicting arch / device_config pair is an error now, not at the first run
        self.chip_ids = chips.resolve_chip_ids(name, num_chips, chip_ids, get_board(self.board_name))  # runtime/chips.py
        self.num_chips = len(self.chip_ids)
        if self.devtype == BackendType.Silicon:
            _warn_no_silicon()
        self._telemetry = telemetry.DeviceState(name, self.arch.value, self.board_name, self.chip_ids)
        try:
            super().__init__(name, module)
        except BaseException:
            self._telemetry.close()
            raise

    @property
    def arch(self) -> BackendDevice:
        """The `arch=` given, else the arch of the `device_config` board, else the installed
        board's (default_arch(), the same as detect_available_devices())."""
        from ..perf.boards import get_board

        configured = _get_global_compiler_config().device_config
        board = get_board(configured) if configured else None
        if self._arch is None:
            return board.arch if board is not None else default_arch()
        if board is not None and board.arch != self._arch:
            raise ValueError(f"TTDevice {self.name}: arch={self._arch.name} conflicts with device_config "
                             f"{board.name!r} (a {board.arch.name} board); drop arch= or choose a device_config of "
                             f"that arch ({'gs_*' if self._arch == BackendDevice.Grayskull else 'wh_*'})")
        return self._arch

    @arch.setter
    def arch(self, value) -> None:
        self._arch = _as_arch(value)

    @property
    def board_name(self) -> str:
        """The simulated board: `device_config` when set, else the installed board (PYBUDA_DEVICE_CONFIG)
        when its arch is this device's, else the arch's usual board."""
        return _get_global_compiler_config().device_config or board_for_arch(self.arch)

    def run_modules(self, inputs):
        start, tick = time.time(), time.perf_counter()
        outputs = super().run_modules(inputs)
        self._telemetry.record_run(start, telemetry.busy_seconds(self, time.perf_counter() - tick))
        return outputs

    def shutdown_device(self) -> int:
        dropped = super().shutdown_device()
        self.compiled.clear()  # the compiled models (and their weights) go with the device
        self._telemetry.close()
        return dropped

    def compile_config(self):
        config = _get_global_compiler_config().copy()
        config.fp32_fallback = self.fp32_fallback
        for name, value in self.config_overrides.items():
            setattr(config, name, value)
        check_accumulate_df(config.accumulate_df, self.arch.value)  # Grayskull has no fp32 accumulation
        return config

    def run_module(self, module, inputs):
        return chips.run_module(self, module, inputs, self._run_on_chip)  # split over chips (runtime/chips.py)

    def _run_on_chip(self, module, inputs):
        args, kwargs = split_inputs(inputs)
        config = self.compile_config()
        saved = frozenset(config.op_intermediates_to_save)
        if isinstance(module, PyBudaModule):
            numerics = config.numerics()
            input_df = numerics.input_df
            ctx = context.ExecutionContext(numerics=numerics, save_intermediates=saved, check_finite=config.check_finite)
            with context.use(ctx):
                tensors = [x if isinstance(x, Tensor) else Tensor.from_array(x, input_df) for x in args]
                outputs = module(*tensors, **kwargs)
                finite_check.check_program(   # inf/NaN the device made from finite inputs: named
                    module.name, module, args, as_tuple(outputs),
                    lambda df: module(*(tensors if df is None else [x if isinstance(x, Tensor) else Tensor.from_array(x, df)
                                                                    for x in args]), **kwargs), config.check_finite)
            _report_intermediates(config, ctx.intermediates)
            return as_tuple(outputs)
        compiled = self.compiled.get(id(module))
        if compiled is None:
            if not hasattr(module, "compile_for_device"):
                raise TypeError(f"{self.name}: module {module.name} cannot be compiled for a TT device")
            compiled = module.compile_for_device(kwargs or host_values(args), config)
            self.compiled[id(module)] = compiled
        compiled.exec_context.save_intermediates = saved
        compiled.exec_context.check_finite = config.check_finite
        compiled.exec_context.intermediates = {}
        outputs = compiled.run(*host_values(args), **kwargs)
        _report_intermediates(config, compiled.exec_context.intermediates)
        return as_tuple(outputs)

    def compile_to_image(self, img_path=None, training: bool = False, sample_inputs=(), sample_targets=()):
        """Compile the placed module for `sample_inputs` and save a TT device image (returns a TTDeviceImage)."""
        from .images import compile_to_image

        return compile_to_image(self, img_path, training, sample_inputs, sample_targets)

    def perf_report(self, microbatch: int | None = None):
        """The perf model on this device's chips, for its compiled module (runtime/chips.py)."""
        return chips.perf_report(self, microbatch)

    @staticmethod
    def load_image(img, model: str | None = None, name: str | None = None) -> "TTDevice":
        """A TTDevice running a model from a TTDeviceImage, without compiling (see runtime/images.py)."""
        from .images import device_from_image

        return device_from_image(TTDevice, img, model, name)

    def _expected_signature(self):
        signature = generation.pushed_signature(self)  # the active module's inputs, past caches (held here) excepted
        return chips.full_batch_signature(self, signature)  # data parallel: compiled for one chip's share

    # ---- generation (runtime/generation.py) -------------------------------------------------
    def generate(self, loop_count: int, write_index: int, tokens_per_iter: int = -1, token_id: int = -1) -> None:
        """Run `loop_count` decoding steps; past-cache outputs are written into the device's cache at
        `write_index` (see runtime/generation.py), the other outputs go to the output queue."""
        generation.generate(self, loop_count, write_index, tokens_per_iter, token_id)

    def set_active_subgraph(self, subgraph_index: int) -> None:
        """Run only the placed module `subgraph_index` (e.g. a prefill or a decode program)."""
        subgraphs.set_active_subgraph(self, subgraph_index)

    def get_active_subgraph(self) -> int | None:
        return subgraphs.get_active_subgraph(self)


class CPUDevice(Device):
    """The host: framework modules run in their own framework."""

    def __init__(self, name: str, optimizer_f=None, scheduler_f=None, mp_context=None, retain_backward_graph=False,
                 module=None, input_dtypes=None):
        self.optimizer_f, self.scheduler_f = optimizer_f, scheduler_f  # torch optimizer factories (training)
        super().__init__(name, module)

    def run_module(self, module, inputs):
        args, kwargs = split_inputs(inputs)
        if not hasattr(module, "cpu_eval"):
            raise TypeError(f"{self.name}: module {module.name} cannot run on a CPUDevice (no framework model)")
        return as_tuple(module.cpu_eval(*host_values(args), **kwargs))

    def generate(self, loop_count: int, write_index: int = 0) -> None:
        """A forward of `loop_count` queued inputs (a CPUDevice keeps no past cache; runtime/generation.py)."""
        generation.generate(self, loop_count, write_index)


def _as_arch(arch) -> BackendDevice:
    return arch if isinstance(arch, BackendDevice) else BackendDevice.from_string(str(arch))


def _check_against(device: str, names, specs, expected) -> None:
    exp_names, exp_specs = expected
    if len(specs) != len(exp_specs):
        raise TypeError(f"{device}: {len(specs)} input(s) pushed, the module expects {len(exp_specs)}")
    if names is not None and exp_names is not None and set(names) != set(exp_names):
        raise TypeError(f"{device}: input names {sorted(names)} do not match the module's inputs {sorted(exp_names)}")
    order = [names.index(n) for n in exp_names] if names is not None and exp_names is not None else range(len(specs))
    for i, j in enumerate(order):
        (shape, dtype), (exp_shape, exp_dtype) = specs[j], exp_specs[i]
        label = exp_names[i] if exp_names else f"#{i}"
        if shape != tuple(exp_shape):
            raise ValueError(f"{device}: input {label} has shape {shape}, expected {tuple(exp_shape)} "
                             "(the shape the module was compiled for)")
        if dtype != exp_dtype:
            raise TypeError(f"{device}: input {label} has dtype {dtype}, expected {exp_dtype}")


def _is_tensor(value) -> bool:
    return isinstance(value, (Tensor, np.ndarray)) or hasattr(value, "shape") and hasattr(value, "dtype")


def _report_intermediates(config, found: dict) -> None:
    if config.op_intermediates_to_save:
        intermediates_queue().put([found[n] for n in config.op_intermediates_to_save if n in found])


def _module_parameters(device, module) -> dict:
    if isinstance(module, PyBudaModule):
        return {p.get_name(): Tensor.from_array(p.value()) for p in module.get_parameters()}
    compiled = getattr(device, "compiled", {}).get(id(module))
    if compiled is not None:
        return {k: Tensor.from_array(v) for k, v in compiled.parameters().items()}
    return {}


def _update_module_parameters(device, module, values: dict) -> None:
    if isinstance(module, PyBudaModule):
        for name, value in values.items():
            if name in {p.get_name() for p in module.get_parameters()}:
                module.set_parameter(name, _to_numpy(value))
        return
    compiled = getattr(device, "compiled", {}).get(id(module))
    if compiled is None:
        raise RuntimeError(f"{device.name}: module {module.name} has not been compiled yet; run it once first")
    compiled.update_parameters({k: _to_numpy(v) for k, v in values.items() if k in compiled.weight_names})


def _warn_no_silicon() -> None:
    global _silicon_warned
    if not _silicon_warned:
        _silicon_warned = True
        warnings.warn("BackendType.Silicon requested but no Tenstorrent hardware is present: running on the simulator",
                      RuntimeWarning, stacklevel=3)
