"""PyBuda's enums for data formats and math fidelity (values as in the Buda backend's DataFormat)."""

from enum import IntEnum


class _JsonEnum(IntEnum):
    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def to_json(self) -> str:
        return self.name

    @classmethod
    def from_json(cls, name: str):
        try:
            return cls[name]
        except KeyError:
            raise ValueError(f"unknown {cls.__name__} {name!r}; expected one of {[m.name for m in cls]}") from None

    @classmethod
    def parse(cls, value):
        """Accept a member, its name (any case) or its integer value."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            for member in cls:
                if member.name.lower() == value.lower():
                    return member
            raise ValueError(f"unknown {cls.__name__} {value!r}; expected one of {[m.name for m in cls]}")
        return cls(value)


class DataFormat(_JsonEnum):
    Float32 = 0
    Float16 = 1
    Bfp8 = 2
    Bfp4 = 3
    Bfp2 = 11
    Float16_b = 5
    Bfp8_b = 6
    Bfp4_b = 7
    Bfp2_b = 15
    Lf8 = 10
    UInt16 = 12
    Int8 = 14
    Int32 = 8
    RawUInt8 = 0xF0
    RawUInt16 = 0xF1
    RawUInt32 = 0xF2
    Invalid = 0xFF


class MathFidelity(_JsonEnum):
    LoFi = 0
    HiFi2 = 2
    HiFi3 = 3
    HiFi4 = 4
    Invalid = 0xFF

    @property
    def phases(self) -> int:
        """Number of fidelity phases (passes through the multiplier)."""
        return _PHASES[self]


_PHASES = {MathFidelity.LoFi: 1, MathFidelity.HiFi2: 2, MathFidelity.HiFi3: 3, MathFidelity.HiFi4: 4}
