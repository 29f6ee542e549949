"""A read-only device tensor held as its data format's bytes; kernels get float32 for each read.

Weights were held as tile-padded float32 arrays: a Float16_b weight took 4 bytes a value where
the device holds 2, a Bfp8_b one 4 where it holds 1 + 1/16, and a weight's transpose (what a
Linear layer's matmul reads) a second float32 copy. A StoredTensor keeps only the codec
(device_codecs.py: the format's bytes, or a view of another StoredTensor's bytes), and every read
of `padded` / `logical()` decodes a fresh float32 array that lives as long as the kernel holds it.
The arrays are exactly what a Tensor of the same values would have stored (same values, C order,
zero padding), so every kernel computes the same bits. What a kernel derives from a weight (its
fidelity slices) is kept in `derived()` only within the process budget (derived_budget.py), and
never for block-float tensors (their slices would take 4-8 times their bytes).

Tensors under MIN_ELEMENTS values stay plain float32 Tensors: their bytes hardly matter, and a
small model's every op would otherwise decode its biases and norms again on each call.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .blockfloat import BFP_FORMATS
from .compact_tensor import CompactTensor, unpadded
from .constants import TILE_DIM
from .dataformat import DataFormat
from .derived_budget import BudgetedCache
from .device_codecs import CastCodec, SwappedCodec, encode, encode_exact, wrap_bits
from .formats import quantize
from .lazy_storage import StorageOnRead
from .shared_weights import interned
from .tensor import Tensor, pad, storage_shape

MIN_ELEMENTS = 1 << 16          # 256 KB of float32: smaller tensors are kept as float32 Tensors
_FLOAT32 = np.dtype(np.float32)
_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_UNROUNDED = (DataFormat.Float32, DataFormat.Int32, DataFormat.Int8)
_PADDED = Tensor.__dict__["padded"]          # the base class's slot (unused here: storage is never kept)


class StoredTensor(Tensor):
    """A Tensor whose storage is a codec; `padded` and `logical()` decode on each read."""

    __slots__ = ("codec", "__weakref__")     # weak: shared_weights' table holds no tensor alive

    def __init__(self, codec, data_format: DataFormat, dtype=None):
        self.codec = codec
        self.shape = tuple(int(d) for d in codec.shape)
        self.data_format = data_format
        self.dtype = _FLOAT32 if dtype is None else np.dtype(dtype)
        self._derived = None if data_format in BFP_FORMATS else BudgetedCache()

    @property
    def padded(self) -> np.ndarray:
        """The tile-padded float32 storage a plain Tensor would hold (C order, zero padding),
        decoded now and read-only; not kept."""
        shape = self.shape
        if len(shape) >= 2 and shape[-2] % TILE_DIM == 0 and shape[-1] % TILE_DIM == 0:
            out = self.codec.values()
        elif len(shape) >= 2:
            out = np.zeros(storage_shape(shape), np.float32)
            self.codec.values_into(out[..., :shape[-2], :shape[-1]])
        else:
            out = pad(self.codec.values())
        out.flags.writeable = False
        return out

    @padded.setter
    def padded(self, value) -> None:
        raise AttributeError("a StoredTensor's storage is its codec; it cannot be replaced")

    def logical(self) -> np.ndarray:
        out = self.codec.values()
        out.flags.writeable = False
        return out

    def storage(self):
        return StorageOnRead(self, storage_shape(self.shape))

    def derived(self) -> dict | None:
        """The budgeted cache (derived_budget.py); None for a block-float tensor, whose slices
        (float32, or bfloat16 terms) would take 4-8 times its bytes: derived on every call."""
        return self._derived

    @property
    def nbytes(self) -> int:
        """Bytes this tensor's own codec holds (0 for a view of another tensor's bytes)."""
        return self.codec.nbytes

    def swapped(self, dim0: int, dim1: int) -> "StoredTensor":
        """The tensor with dims `dim0` and `dim1` exchanged, sharing these bytes."""
        return StoredTensor(self.codec.swapped(dim0, dim1), self.data_format, self.dtype)

    def laid_out(self) -> "StoredTensor":
        """This tensor with its bytes in its own C order, for one kept between runs: a swapped view
        (a weight's transpose) decodes through strided reads, several times slower than the GEMM
        reading it, so a kept one gets its own bytes once (2 a value for Float16_b). A block-float
        view whose values the format cannot hold in the new blocks stays a view."""
        codec = self.codec
        if isinstance(codec, CastCodec):
            if codec.array.flags.c_contiguous:
                return self
            return StoredTensor(CastCodec(_c_ordered(codec.array)), self.data_format, self.dtype)
        if isinstance(codec, SwappedCodec):
            own = encode_exact(codec.values(), self.data_format)
            if own is not None:
                return StoredTensor(own, self.data_format, self.dtype)
        return self

    def __repr__(self) -> str:
        return f"StoredTensor(shape={self.shape}, data_format={self.data_format.name})"


def _c_ordered(array: np.ndarray) -> np.ndarray:
    """np.ascontiguousarray(array) for a view of 1- or 2-byte values (a transposed weight's bytes),
    copied by torch as integers of that width: a blocked transpose, 2x numpy's strided copy of the
    same bytes (numpy copies ml_dtypes' bfloat16 element by element)."""
    from .bf16_gemm import torch_view

    if array.itemsize not in (1, 2) or any(s < 0 or s % array.itemsize for s in array.strides):
        return np.ascontiguousarray(array)
    bits = f"int{8 * array.itemsize}"
    out = np.empty(array.shape, array.dtype)        # numpy's own memory: the codec counts it as its bytes
    torch_view(out.view(bits)).copy_(torch_view(array.view(bits)))
    return out


def large(shape) -> bool:
    size = 1
    for d in shape:
        size *= int(d)
    return size >= MIN_ELEMENTS


def from_value(value: np.ndarray, data_format: DataFormat) -> Tensor:
    """Tensor.from_array(value, data_format) for a weight: the same values, held as the format's
    bytes when the tensor is large and the format has a codec (a bfloat16 `value` bound for
    Float16_b is held as it is, sharing its memory); read-only either way."""
    if large(value.shape) and data_format not in _UNROUNDED:
        codec = wrap_bits(value) if data_format is DataFormat.Float16_b else None
        if codec is not None:
            return StoredTensor(codec, data_format)             # the framework's own memory
        codec = encode(np.asarray(value, np.float32), data_format) if _floating(value.dtype) else None
        if codec is not None:
            return interned(StoredTensor(codec, data_format))   # one copy per content (shared_weights)
    if _floating(value.dtype) and _padding_factor(value.shape) >= 4:     # a [C, K, 1] conv weight: kept
        values = np.asarray(value, np.float32)                           # compact, padded if a kernel asks
        values = values.copy() if data_format in _UNROUNDED else quantize(values, data_format)
        values.flags.writeable = False
        return CompactTensor(values, data_format)
    tensor = Tensor.from_array(np.asarray(value, np.float32) if _floating(value.dtype) else value, data_format)
    tensor.padded.flags.writeable = False
    return tensor


def _padding_factor(shape) -> float:
    """Tile-padded storage over logical size."""
    size = 1
    for d in shape:
        size *= int(d)
    padded = 1
    for d in storage_shape(shape):
        padded *= d
    return padded / max(size, 1)


def _floating(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == _BFLOAT16


def kept(tensor: Tensor) -> Tensor:
    """A result computed from weights only (consteval), as it is kept between runs: held as its
    format's bytes when large and exactly representable, else as it is (made read-only)."""
    if type(tensor) is StoredTensor:
        laid_out = tensor.laid_out()
        return tensor if laid_out is tensor else interned(laid_out)     # new bytes: ours to share
    if tensor.dtype == _FLOAT32 and large(tensor.shape) \
            and tensor.data_format not in _UNROUNDED:
        codec = encode_exact(np.ascontiguousarray(tensor.logical()), tensor.data_format)
        if codec is not None:
            return interned(StoredTensor(codec, tensor.data_format))
    if unpadded(tensor) and _padding_factor(tensor.shape) >= 4:    # ([C, K, 1, 1]: padded 1024 times)
        tensor.logical().flags.writeable = False     # kept compact: storage made only if a kernel reads it
    else:
        tensor.padded.flags.writeable = False
    return tensor


def stored_bytes(tensor: Tensor) -> int:
    """Bytes a device tensor holds: its codec's, or its float32 storage's."""
    return tensor.nbytes if type(tensor) is StoredTensor else tensor.padded.nbytes
