"""The devices created in this process, in creation order: PyBuda's pipeline is that order.

A device joins when it is fully built (Device.__init__) and leaves at shutdown; the pipeline, training,
parameters and images read the list here, so none of them needs the device classes."""

from __future__ import annotations

_devices: list = []


def register(device) -> None:
    _devices.append(device)


def registered_devices() -> list:
    return list(_devices)


def clear_devices() -> None:
    _devices.clear()


def remove_device(device) -> None:
    if device in _devices:
        _devices.remove(device)
