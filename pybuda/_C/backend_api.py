"""`pybuda._C.backend_api`: the backend enums, the same objects as `pybuda.BackendDevice` etc."""

from buda_runtime_sim.enums import BackendDevice, BackendType, DeviceMode

__all__ = ["BackendDevice", "BackendType", "DeviceMode"]
