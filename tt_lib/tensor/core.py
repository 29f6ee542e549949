"""tt_lib.tensor.Tensor: host and device tensors with TT-Dispatch's data types and layouts.

Host tensors hold their values rounded to the data type; `Layout.TILE` orders them the way the
device stores them (32x32 tiles of four 16x16 faces, row-major within a face), which is what
`data()` returns. Device tensors hold simulator storage (tile-padded, in the device format) and
keep their device alive.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from buda_runtime_sim.constants import TILE_DIM
from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.tensor import Tensor as SimTensor
from buda_runtime_sim.tensor import _to_numpy

from ..device import Device, Host

FACE_DIM = TILE_DIM // 2


class DataType(Enum):
    BFLOAT16 = DataFormat.Float16_b
    FLOAT32 = DataFormat.Float32
    BFLOAT8_B = DataFormat.Bfp8_b


class Layout(Enum):
    ROW_MAJOR = "row_major"
    TILE = "tile"


def tilize(values: np.ndarray) -> np.ndarray:
    """Logical [..., H, W] (H, W multiples of 32) -> flat values in tile order."""
    *batch, h, w = values.shape
    faces = values.reshape(*batch, h // TILE_DIM, 2, FACE_DIM, w // TILE_DIM, 2, FACE_DIM)
    n = len(batch)
    order = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2, n + 5]
    return np.ascontiguousarray(faces.transpose(order)).reshape(-1)


def untilize(flat: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Inverse of `tilize`: flat values in tile order -> logical array of `shape`."""
    *batch, h, w = shape
    n = len(batch)
    tiled = flat.reshape(*batch, h // TILE_DIM, w // TILE_DIM, 2, 2, FACE_DIM, FACE_DIM)
    order = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3, n + 5]
    return np.ascontiguousarray(tiled.transpose(order)).reshape(shape)


def _check_tileable(shape, what: str) -> None:
    if len(shape) < 2 or shape[-1] % TILE_DIM or shape[-2] % TILE_DIM:
        raise ValueError(f"{what}: TILE layout needs the last two dims to be multiples of {TILE_DIM}, "
                         f"got shape {list(shape)}; pad the tensor first")


class Tensor:
    """`Tensor(data, shape, dtype, layout)`: data a flat list in `layout` order (or a torch/numpy
    array in logical order)."""

    def __init__(self, data, shape=None, dtype: DataType = DataType.BFLOAT16, layout: Layout = Layout.ROW_MAJOR):
        if not isinstance(dtype, DataType):
            raise TypeError(f"Tensor: dtype must be a tt_lib.tensor.DataType, got {dtype!r}")
        if not isinstance(layout, Layout):
            raise TypeError(f"Tensor: layout must be a tt_lib.tensor.Layout, got {layout!r}")
        if isinstance(data, (list, tuple)):
            if shape is None:
                raise ValueError("Tensor: a flat list of values needs a shape")
            flat = np.asarray(data, dtype=np.float32).reshape(-1)
        else:
            array = _to_numpy(data).astype(np.float32)
            shape = list(array.shape) if shape is None else shape
            flat = array.reshape(-1)
            if layout == Layout.TILE:  # arrays come in logical order
                _check_tileable(tuple(shape), "Tensor")
                flat = tilize(flat.reshape(tuple(int(d) for d in shape)))
        shape = tuple(int(d) for d in shape)
        if any(d <= 0 for d in shape):
            raise ValueError(f"Tensor: every dimension must be positive, got {list(shape)}")
        if flat.size != int(np.prod(shape)):
            raise ValueError(f"Tensor: {flat.size} values do not fill shape {list(shape)} ({int(np.prod(shape))} values)")
        if layout == Layout.TILE:
            _check_tileable(shape, "Tensor")
            logical = untilize(flat, shape)
        else:
            logical = flat.reshape(shape)
        if dtype == DataType.BFLOAT8_B and layout != Layout.TILE:
            raise ValueError("Tensor: BFLOAT8_B is a block format stored in tiles; use Layout.TILE")
        self._init(SimTensor.from_array(logical, dtype.value).logical().copy(), dtype, layout, None, None)

    def _init(self, values, dtype, layout, device, storage) -> "Tensor":
        self._values = values      # logical values on the host (None on a device)
        self._dtype = dtype
        self._layout = layout
        self._device = device      # Device, or None on the host (a strong reference: see tt_lib.device)
        self._storage = storage    # buda_runtime_sim Tensor on the device
        return self

    @classmethod
    def _on_device(cls, storage: SimTensor, dtype: DataType, layout: Layout, device: Device) -> "Tensor":
        out = cls.__new__(cls)._init(None, dtype, layout, device, storage)
        device.register(out)
        return out

    # ---- placement ------------------------------------------------------------------------
    def to(self, target) -> "Tensor":
        """Move to a Device or the Host, or change layout (on the host)."""
        if isinstance(target, Device):
            target.check_usable("Tensor.to(device)")
            if self._device is not None:
                raise RuntimeError("Tensor.to(device): the tensor is already on a device; bring it to the host first")
            storage = SimTensor.from_array(self._values, self._dtype.value)
            return Tensor._on_device(storage, self._dtype, self._layout, target)
        if isinstance(target, Host):
            if self._device is None:
                return self
            self._device.check_usable("Tensor.to(host)")
            values = self._storage.logical().astype(np.float32, copy=True)
            return Tensor.__new__(Tensor)._init(values, self._dtype, self._layout, None, None)
        if isinstance(target, Layout):
            if self._device is not None:
                raise RuntimeError("Tensor.to(layout): layouts change on the host; call .to(host) first")
            if target == Layout.TILE:
                _check_tileable(self._values.shape, "Tensor.to(Layout.TILE)")
            elif self._dtype == DataType.BFLOAT8_B:
                raise ValueError("Tensor.to(Layout.ROW_MAJOR): BFLOAT8_B tensors stay in TILE layout")
            return Tensor.__new__(Tensor)._init(self._values, self._dtype, target, None, None)
        raise TypeError(f"Tensor.to expects a Device, the Host or a Layout, got {type(target).__name__}")

    # ---- reading --------------------------------------------------------------------------
    def to_torch(self):
        """The values as a torch.float32 tensor of the logical shape (host tensors only)."""
        import torch

        return torch.from_numpy(self._host_values("to_torch").copy())

    def data(self) -> list[float]:
        """The values as a flat list in this tensor's layout order (host tensors only)."""
        values = self._host_values("data")
        return (tilize(values) if self._layout == Layout.TILE else values.reshape(-1)).tolist()

    def _host_values(self, what: str) -> np.ndarray:
        if self._device is not None:
            raise RuntimeError(f"Tensor.{what}: the tensor is on device {self._device.pci_slot}; "
                               "call .to(tt_lib.device.GetHost()) first")
        return self._values

    def shape(self) -> list[int]:
        return list(self._storage.shape if self._device is not None else self._values.shape)

    def dtype(self) -> DataType:
        return self._dtype

    def layout(self) -> Layout:
        return self._layout

    def device(self) -> Device | None:
        return self._device

    def on_device(self) -> bool:
        return self._device is not None

    @property
    def storage_bytes(self) -> int:
        """Device bytes this tensor occupies (tile-padded storage in its data format)."""
        if self._storage is None:
            return 0
        from buda_runtime_sim.formats import tile_bytes

        tiles = self._storage.padded.size // (TILE_DIM * TILE_DIM)
        return tiles * tile_bytes(self._dtype.value)

    def __repr__(self) -> str:
        where = f"device {self._device.pci_slot}" if self._device is not None else "host"
        return f"Tensor(shape={self.shape()}, dtype={self._dtype.name}, layout={self._layout.name}, on {where})"
