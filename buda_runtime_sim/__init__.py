"""The simulated Tenstorrent device and the PyBuda runtime API it serves. Never imports TVM."""

from . import op, runtime
from .dataformat import DataFormat, MathFidelity
from .module import Module, Parameter, PyBudaModule
from .tensor import Tensor

__all__ = ["DataFormat", "MathFidelity", "Module", "Parameter", "PyBudaModule", "Tensor", "op", "runtime"]
