"""Device tensors: a logical shape stored tile-padded, PyBuda-style.

Storage is at least 2-D; the last two dimensions are zero-padded up to multiples of TILE_DIM,
exactly what the hardware holds. Kernels may compute on the padded storage as long as
padding never leaks into a result; `logical()` is the unpadded view users see.
"""

from __future__ import annotations

import numpy as np

from .constants import TILE_DIM
from .dataformat import DataFormat
from .float_errors import ignored
from .formats import bfloat16_values, holds_exactly, quantize

_FLOAT32 = np.dtype(np.float32)
_BF16 = DataFormat.Float16_b
_new = object.__new__
# Formats a host array keeps its integer values in.
_INTEGER_DTYPES = {np.dtype(np.int32): DataFormat.Int32, np.dtype(np.int8): DataFormat.Int8}
# Members read once (an enum member lookup costs ~0.1 us, and these are asked per tensor made).
_FLOAT32_FORMAT = DataFormat.Float32
_UNROUNDED_FORMATS = (DataFormat.Float32, DataFormat.Int32, DataFormat.Int8)   # from_array keeps values as they are


def plain_ints(values: tuple) -> bool:
    """Every value an int (not a bool or numpy integer): a loop, ~3x faster than all() over a
    generator for the short shapes every op passes."""
    for v in values:
        if type(v) is not int:
            return False
    return True


def round_up(n: int, multiple: int = TILE_DIM) -> int:
    return -(-n // multiple) * multiple


def storage_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Shape of the padded storage for a logical shape."""
    two_d = (1,) * max(0, 2 - len(shape)) + tuple(shape)
    return two_d[:-2] + (round_up(two_d[-2]), round_up(two_d[-1]))


class Tensor:
    """A tensor on the simulated device (or travelling to/from it)."""

    __slots__ = ("padded", "shape", "data_format", "dtype", "_derived")

    def __init__(self, padded: np.ndarray, shape, data_format: DataFormat = DataFormat.Float32, dtype=None):
        # (every op makes one: the common argument types skip the conversions)
        self.padded = padded
        if type(shape) is tuple:   # kept when every dim is an int already (tuple(map(int, ...)) costs ~1 us)
            for d in shape:
                if type(d) is not int:
                    shape = tuple(map(int, shape))
                    break
        else:
            shape = tuple(map(int, shape))
        self.shape = shape
        self.data_format = data_format if type(data_format) is DataFormat else DataFormat(data_format)
        self.dtype = _FLOAT32 if dtype is None else np.dtype(dtype)
        self._derived = None

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    def of(cls, padded: np.ndarray, shape: tuple[int, ...], data_format: DataFormat) -> "Tensor":
        """A float32 tensor whose `shape` is a tuple of Python ints already (a numpy shape, another
        tensor's): what the constructor makes, without its conversions (every kernel makes one)."""
        tensor = _new(cls)
        tensor.padded = padded
        tensor.shape = shape
        tensor.data_format = data_format if type(data_format) is DataFormat else DataFormat(data_format)
        tensor.dtype = _FLOAT32
        tensor._derived = None
        return tensor

    @classmethod
    def from_array(cls, array, data_format: DataFormat | None = None) -> "Tensor":
        """Pad a host array into device storage, rounding it to `data_format` (float32 if None)."""
        array = _to_numpy(array)
        dtype = array.dtype
        if data_format is None:
            data_format = _INTEGER_DTYPES.get(dtype, _FLOAT32_FORMAT)
        values = array.astype(np.float32, copy=False)
        if data_format not in _UNROUNDED_FORMATS:
            values = quantize(values, data_format)
        return cls(pad(values), array.shape, data_format, dtype if dtype.kind in "iub" else None)   # None: float32

    @classmethod
    def from_padded(cls, padded: np.ndarray, shape, data_format: DataFormat, held_in: DataFormat | None = None) -> "Tensor":
        """Wrap kernel output that is already padded; rounds it to `data_format` unless the values
        are known to be held in a format `data_format` represents exactly (`held_in`)."""
        if held_in is None and data_format is _BF16 and type(padded) is np.ndarray and padded.dtype == _FLOAT32:
            with ignored():    # the default format, as formats.quantize rounds it (saturating)
                return cls(bfloat16_values(padded), shape, data_format)
        if held_in is None or not holds_exactly(data_format, held_in):
            if data_format != _FLOAT32_FORMAT:
                padded = quantize(padded, data_format)
        return cls(np.asarray(padded, dtype=np.float32), shape, data_format)

    @classmethod
    def create_from_torch(cls, torch_tensor, dev_data_format=None, constant: bool = False) -> "Tensor":
        """PyBuda's name: a device tensor from a torch tensor, rounded to `dev_data_format` if given."""
        return cls.from_array(torch_tensor, None if dev_data_format is None else DataFormat.parse(dev_data_format))

    def derived(self) -> dict | None:
        """A cache for data derived from this tensor's values (a weight's fidelity slices), kept on
        the tensor so it lives exactly as long; None when the storage is writable (it may change)."""
        if self.padded.flags.writeable:
            return None
        if self._derived is None:
            self._derived = {}
        return self._derived

    def storage(self):
        """The padded storage, for a reader that may need only its shape: a tensor kept in a
        narrower form gives an array-like that becomes the array under np.asarray (widen_on_read.py)."""
        return self.padded

    # ---- views ----------------------------------------------------------------------------
    def logical(self) -> np.ndarray:
        """The unpadded values as float32 (a view where possible)."""
        padded, shape = self.padded, self.shape
        if len(shape) >= 2 and padded.shape[-2:] == shape[-2:]:   # unpad's first case, without its frame
            return padded.reshape(shape)
        return unpad(padded, shape)

    def numpy(self) -> np.ndarray:
        """The unpadded values in the tensor's host dtype, in the tensor's own rank (0-d stays 0-d:
        np.ascontiguousarray alone would make a scalar 1-d)."""
        values = self.logical()
        out = values.astype(self.dtype) if self.dtype != values.dtype else np.ascontiguousarray(values)
        return out.reshape(self.shape)

    def value(self):
        """The value as a torch tensor (PyBuda's `Tensor.value()`)."""
        import torch

        return torch.from_numpy(np.array(self.numpy()))

    def to_pytorch(self):
        """PyBuda's name for `value()`: a torch tensor."""
        return self.value()

    def to_framework(self, framework: str):
        """Convert to "pytorch", "tensorflow", "jax" or "numpy"."""
        from .framework_tensors import to_framework

        return to_framework(self.numpy(), framework)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape}, data_format={self.data_format.name})"


def pad(values: np.ndarray) -> np.ndarray:
    """Zero-pad the last two dims of `values` (promoted to >= 2-D) to tile multiples."""
    values = np.asarray(values, dtype=np.float32)
    shape = values.shape
    ndim = len(shape)
    if ndim < 2:   # one row (a bias, a scalar)
        cols = shape[0] if ndim else 1
        out = np.zeros((TILE_DIM, -(-cols // TILE_DIM) * TILE_DIM), dtype=np.float32)
        out[0, :cols] = values
        return out
    rows, cols = shape[-2], shape[-1]
    if rows % TILE_DIM == 0 and cols % TILE_DIM == 0:
        return np.ascontiguousarray(values)
    out = np.zeros(shape[:-2] + (-(-rows // TILE_DIM) * TILE_DIM, -(-cols // TILE_DIM) * TILE_DIM), dtype=np.float32)
    if ndim == 2:
        out[:rows, :cols] = values   # (an Ellipsis index costs more)
    else:
        out[..., :rows, :cols] = values
    return out


def unpad(padded: np.ndarray, shape) -> np.ndarray:
    if type(shape) is not tuple:
        shape = tuple(shape)
    if len(shape) >= 2 and padded.shape[-2:] == shape[-2:]:   # nothing padded: a view of it all
        return padded.reshape(shape)
    two_d = (1,) * max(0, 2 - len(shape)) + shape
    view = padded[..., : two_d[-2], : two_d[-1]]
    return view.reshape(shape)


def zero_padding(padded: np.ndarray, shape) -> np.ndarray:
    """Clear the padding region in place (after an op whose f(0) != 0) and return the array."""
    shape = tuple(shape)
    two_d = (1,) * max(0, 2 - len(shape)) + shape
    rows, cols = two_d[-2], two_d[-1]
    if padded.shape[-2] > rows:
        padded[..., rows:, :] = 0
    if padded.shape[-1] > cols:
        padded[..., :, cols:] = 0
    return padded


def _to_numpy(array) -> np.ndarray:
    if type(array) is np.ndarray:      # the common case, without the attribute probes below
        return array
    if isinstance(array, Tensor):
        return array.numpy()
    if hasattr(array, "detach"):  # torch
        return array.detach().cpu().numpy()
    if hasattr(array, "numpy") and not isinstance(array, np.ndarray):  # tf / tvm
        return np.asarray(array.numpy())
    return np.asarray(array)
