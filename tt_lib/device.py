"""tt_lib.device: the host and simulated accelerator devices.

A device is a simulated board slot (`CreateDevice(arch, pci_slot)`). Tensors placed on a device
hold a reference to it, so a device can never be collected before its tensors (the crash the
TT-Dispatch guide warns about cannot happen); using a closed device is a clear error.
"""

from __future__ import annotations

import threading
import weakref
from enum import Enum

from buda_runtime_sim.enums import BackendDevice

# Slots a simulated host offers (PCIe slots 0..MAX_SLOTS-1): enough for an n300's two chips and
# a few boards; the simulator has no physical limit.
MAX_SLOTS = 8


class Arch(Enum):
    GRAYSKULL = "grayskull"
    WORMHOLE_B0 = "wormhole_b0"

    @property
    def backend_device(self) -> BackendDevice:
        return BackendDevice.from_string(self.value)


class Host:
    """The machine running Python; `tensor.to(host)` brings a tensor back to it."""

    def __repr__(self) -> str:
        return "Host()"


_HOST = Host()


class Device:
    """A simulated Tenstorrent accelerator in one PCIe slot."""

    def __init__(self, arch: Arch, pci_slot: int):
        self.arch = arch
        self.pci_slot = pci_slot
        self.initialized = False
        self.closed = False
        self._buffers: "weakref.WeakSet" = weakref.WeakSet()  # device tensors alive on it

    def check_usable(self, what: str) -> None:
        if self.closed:
            raise RuntimeError(f"{what}: device {self.pci_slot} ({self.arch.name}) was closed with CloseDevice; "
                               "create and initialize a new device")
        if not self.initialized:
            raise RuntimeError(f"{what}: device {self.pci_slot} is not initialized; call "
                               "tt_lib.device.InitializeDevice(device) first")

    def register(self, tensor) -> None:
        self._buffers.add(tensor)

    @property
    def allocated_bytes(self) -> int:
        """Bytes of device storage held by live tensors (tile-padded, as the device holds them)."""
        return sum(t.storage_bytes for t in list(self._buffers))

    def __repr__(self) -> str:
        state = "closed" if self.closed else "initialized" if self.initialized else "created"
        return f"Device({self.arch.name}, pci_slot={self.pci_slot}, {state})"


_lock = threading.Lock()
_open: dict[int, Device] = {}
_default: Device | None = None


def CreateDevice(arch: Arch, pci_slot: int = 0) -> Device:
    """A device of type `arch` in PCIe slot `pci_slot` (0 .. MAX_SLOTS-1)."""
    if not isinstance(arch, Arch):
        raise TypeError(f"CreateDevice: arch must be tt_lib.device.Arch.GRAYSKULL or WORMHOLE_B0, got {arch!r}")
    if not isinstance(pci_slot, int) or not 0 <= pci_slot < MAX_SLOTS:
        raise ValueError(f"CreateDevice: pci_slot must be an int in 0..{MAX_SLOTS - 1}, got {pci_slot!r}")
    with _lock:
        current = _open.get(pci_slot)
        if current is not None and not current.closed:
            raise RuntimeError(f"CreateDevice: device {pci_slot} is already open ({current!r}); "
                               "close it with CloseDevice first")
        device = Device(arch, pci_slot)
        _open[pci_slot] = device
        return device


def InitializeDevice(device: Device) -> None:
    if not isinstance(device, Device):
        raise TypeError(f"InitializeDevice expects a tt_lib.device.Device, got {type(device).__name__}")
    if device.closed:
        raise RuntimeError(f"InitializeDevice: device {device.pci_slot} was closed; create a new one")
    device.initialized = True


def CloseDevice(device: Device) -> None:
    """Close the device; its tensors stay readable on the host only if moved there before. Idempotent."""
    global _default
    if not isinstance(device, Device):
        raise TypeError(f"CloseDevice expects a tt_lib.device.Device, got {type(device).__name__}")
    with _lock:
        device.closed = True
        if _open.get(device.pci_slot) is device:
            del _open[device.pci_slot]
        if _default is device:
            _default = None


def GetHost() -> Host:
    return _HOST


def SetDefaultDevice(device: Device) -> None:
    global _default
    if not isinstance(device, Device):
        raise TypeError(f"SetDefaultDevice expects a tt_lib.device.Device, got {type(device).__name__}")
    _default = device


def GetDefaultDevice() -> Device | None:
    """The device set with SetDefaultDevice (None when none is set or it was closed)."""
    return _default
