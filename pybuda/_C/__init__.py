"""`pybuda._C`: where PyBuda's compiled extension kept its enums; real scripts import them from here.

The objects are the very ones `pybuda.DataFormat`, `pybuda.MathFidelity` and
`pybuda.BackendDevice` name, so comparisons across spellings hold. Like PyBuda's extension, every
DataFormat member is also a module-level name (`pybuda._C.Float16_b`).
"""

from buda_runtime_sim.dataformat import DataFormat, MathFidelity

from . import backend_api

globals().update({member.name: member for member in DataFormat})

__all__ = ["DataFormat", "MathFidelity", "backend_api", *(member.name for member in DataFormat)]
