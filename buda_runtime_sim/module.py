"""PyBuda's module classes: Module, PyBudaModule and Parameter."""

from __future__ import annotations

import zlib

import numpy as np

from .dataformat import DataFormat
from .stored_tensor import StoredTensor, from_value, stored_bytes
from .tensor import Tensor, _to_numpy

# How Module.run executes a module alone; installed by buda_runtime_sim.runtime (which depends on
# this module, not the other way round).
_runner = None


def set_runner(runner) -> None:
    """Install `runner(module, args) -> outputs`, used by Module.run."""
    global _runner
    _runner = runner


def _float_value(value: np.ndarray, copy: bool) -> np.ndarray:
    """A weight's host value as float32, or as it is when it is bfloat16 (a bfloat16 framework
    weight: its Float16_b device copy then shares its bytes, stored_tensor.from_value)."""
    if value.dtype.name == "bfloat16":
        return value.copy() if copy else value
    return value.astype(np.float32, copy=copy)


class Parameter:
    """A named weight of a PyBudaModule: `Parameter(*shape)` or `Parameter(torch_tensor)`."""

    def __init__(self, *args, requires_grad: bool = True, name: str | None = None, dev_data_format: DataFormat | None = None):
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            value = _float_value(_to_numpy(args[0]), copy=True)
            shape = value.shape
        else:
            shape = tuple(int(a) for a in args)
            if any(d <= 0 for d in shape):
                raise ValueError(f"Parameter {name or ''}: every dimension must be positive, got shape {shape}")
            value = None
        self.shape = shape
        self.requires_grad = requires_grad
        self._name = name
        self.dev_data_format = DataFormat(dev_data_format) if dev_data_format is not None else None
        self._value = value
        self._device_copies: dict[DataFormat, Tensor] = {}
        self.consteval: dict = {}  # results of ops computed from weights only (see op.dispatch)
        self.version = 0           # bumped by set_value: keys consteval results of several weights

    def get_name(self) -> str | None:
        return self._name

    def set_value(self, value, device_copies: dict | None = None) -> None:
        """device_copies: a dict shared by parameters given this same value object at the same time
        (a weight held by a model's forward and backward programs), so each device format of it is
        converted once for all of them; its keys say the format (and layout), so sharing it is safe
        while the value is not changed in place."""
        value = _float_value(_to_numpy(value), copy=False)
        if tuple(value.shape) != tuple(self.shape):
            raise ValueError(f"Parameter {self._name}: value has shape {tuple(value.shape)}, expected {self.shape}")
        self._value = value
        self._device_copies = {} if device_copies is None else device_copies
        self.consteval = {}
        self.version += 1

    def value(self) -> np.ndarray:
        if self._value is None:  # deterministic per name, like a seeded initialiser
            rng = np.random.default_rng(zlib.crc32((self._name or "").encode()))
            self._value = rng.random(self.shape, dtype=np.float32)
        return self._value

    def device_tensor(self, data_format: DataFormat, layout=None, keep: bool = True) -> Tensor:
        """The parameter as stored on the device in `data_format` (converted once, then reused).
        `layout` (hashable, array -> array) is how the device holds it when an op keeps its weights
        in another shape, e.g. a conv kernel as a matrix; the host value keeps its own shape.
        keep=False (an op computed from weights only, whose result is kept instead: a Linear
        weight's transpose) does not keep a copy held as its format's bytes (a large weight),
        unless another op kept it already: such a weight is then held once, as that op's result."""
        df = self.dev_data_format if self.dev_data_format is not None else data_format
        key = df if layout is None else (df, layout)
        tensor = self._device_copies.get(key)
        if tensor is None:
            value = self.value() if layout is None else layout(self.value())
            # read-only, shared by every run (kernels may cache derived data); a large one is held
            # as its format's bytes (stored_tensor.py)
            tensor = from_value(value, df)
            if keep or type(tensor) is not StoredTensor:    # (small copies are kept: cheap, and a training
                self._device_copies[key] = tensor           # step's prefill reads which formats were asked)
        return tensor

    def device_bytes(self) -> int:
        """Bytes of every copy the device holds (a large one as its format's bytes, others as
        tile-padded float32 storage)."""
        return sum(stored_bytes(t) for t in self._device_copies.values())

    def __repr__(self) -> str:
        return f"Parameter({self._name}, shape={self.shape})"


class Module:
    """A workload that can be placed on one device."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise TypeError(f"{type(self).__name__} needs a non-empty string name, got {name!r}")
        self.name = name
        self.device = None

    def get_name(self) -> str:
        return self.name

    def get_device(self):
        return self.device

    def run(self, *args):
        """Run inference on this module alone on a simulated TT device and return its outputs."""
        if _runner is None:
            raise RuntimeError("Module.run needs the runtime: import buda_runtime_sim.runtime (or pybuda) first")
        return _runner(self, args)


class PyBudaModule(Module):
    """Base class for modules written with `pybuda.op.*`; subclasses define `forward`."""

    def __init__(self, name: str):
        super().__init__(name)
        self._parameters: dict[str, Parameter] = {}
        self._constants: dict[str, np.ndarray | None] = {}
        self._constant_shapes: dict[str, tuple | None] = {}

    def __setattr__(self, key, value):
        if isinstance(value, Parameter):
            if value._name is None:
                value._name = key
            self.__dict__.setdefault("_parameters", {})[value._name] = value
        super().__setattr__(key, value)

    def pre_forward(self, *args, **kwargs):
        return None

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        self.pre_forward(*args, **kwargs)
        return self.forward(*args, **kwargs)

    # ---- parameters -----------------------------------------------------------------------
    def add_parameter(self, name: str, parameter: Parameter, prepend_name: bool = False) -> None:
        full = f"{self.name}.{name}" if prepend_name else name
        if full in self._parameters:
            raise ValueError(f"module {self.name}: parameter {full!r} already exists")
        parameter._name = full
        self._parameters[full] = parameter

    def get_parameter(self, name: str) -> Parameter:
        try:
            return self._parameters[name]
        except KeyError:
            raise KeyError(f"module {self.name} has no parameter {name!r}; it has {sorted(self._parameters)}") from None

    def get_parameters(self, submodules: bool = True) -> list[Parameter]:
        return list(self._parameters.values())

    def set_parameter(self, name: str, data) -> None:
        self.get_parameter(name).set_value(data)

    def load_parameter_dict(self, data: dict) -> None:
        for name, value in data.items():
            if name in self._parameters:
                self.set_parameter(name, value)
            elif name in self._constants:
                self.set_constant(name, value)
            else:
                raise KeyError(f"module {self.name}: {name!r} is neither a parameter nor a constant")

    # ---- constants ------------------------------------------------------------------------
    def add_constant(self, name: str, prepend_name: bool = False, shape: tuple | None = None) -> None:
        full = f"{self.name}.{name}" if prepend_name else name
        self._constants[full] = None
        self._constant_shapes[full] = tuple(shape) if shape is not None else None

    def set_constant(self, name: str, data) -> None:
        if name not in self._constants:
            raise KeyError(f"module {self.name} has no constant {name!r}; declare it with add_constant")
        value = _to_numpy(data)
        expected = self._constant_shapes.get(name)
        if expected is not None and tuple(value.shape) != expected:
            raise ValueError(f"constant {name!r}: value has shape {tuple(value.shape)}, expected {expected}")
        self._constants[name] = value

    def get_constant(self, name: str):
        try:
            value = self._constants[name]
        except KeyError:
            raise KeyError(f"module {self.name} has no constant {name!r}") from None
        if value is None:
            raise ValueError(f"module {self.name}: constant {name!r} was declared but never set")
        return Constant(name, value)


class Constant:
    """A named constant value fed to an op (what `get_constant` returns)."""

    def __init__(self, name: str, value: np.ndarray):
        self.name = name
        self.value = value

    @property
    def shape(self):
        return tuple(self.value.shape)
