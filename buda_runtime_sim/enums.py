"""Backend enums from pybuda._C.backend_api."""

from enum import Enum


class BackendDevice(Enum):
    Grayskull = "grayskull"
    Wormhole_B0 = "wormhole_b0"

    @classmethod
    def from_string(cls, name: str) -> "BackendDevice":
        for member in cls:
            if member.value == name.lower() or member.name.lower() == name.lower():
                return member
        raise ValueError(f"unknown arch {name!r}; expected one of {[m.name for m in cls]}")


class BackendType(Enum):
    Golden = "golden"
    Model = "model"
    Versim = "versim"
    Emulation = "emulation"
    NoBackend = "nobackend"
    Silicon = "silicon"


class DeviceMode(Enum):
    CompileAndRun = 0
    CompileOnly = 1
    RunOnly = 2
