"""One copy of a read-only device tensor per content in a process, whichever program placed it.

Generation compiles one model several times (a prefill and a decode program per batch and cache
length); each compile placed its own device bytes of every weight and of what consteval derives
from them (a Linear's transpose), so a 1.1B Llama with four programs held four copies. A
StoredTensor whose bytes were encoded here (and are never written again) is looked up by a
BLAKE3 digest of those bytes, its format and dtype: a second program with the same weights gets
the first one's tensor, and its fidelity slices. Tensors viewing memory we do not own (a bfloat16
framework weight shared as Float16_b) are never entered: the framework may change them in place,
and they cost no copy anyway. Entries are weak: the tensor goes when no program holds it.
"""

from __future__ import annotations

import threading
import weakref

import blake3
import numpy as np

from .device_codecs import BlockCodec, CastCodec, SwappedCodec

_TABLE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_LOCK = threading.Lock()


def _arrays(codec) -> list | None:
    """The arrays holding the codec's bytes (None for a codec kind this table does not know)."""
    if isinstance(codec, CastCodec):
        return [codec.array]
    if isinstance(codec, BlockCodec):
        return [codec.exponents, codec.codes]
    if isinstance(codec, SwappedCodec):
        return _arrays(codec.inner)
    return None


def _describe(codec) -> str:
    if isinstance(codec, SwappedCodec):
        return f"swap{codec.dims}({_describe(codec.inner)})"
    if isinstance(codec, BlockCodec):
        return f"block({codec.spec.code_bits},{codec.shape})"
    return f"cast({codec.array.dtype.str},{codec.array.shape})"


def interned(tensor):
    """`tensor`, or an earlier tensor with the same bytes, format and dtype. Only for a StoredTensor
    whose bytes the caller has just encoded (they are made read-only here)."""
    arrays = _arrays(tensor.codec)
    if arrays is None:
        return tensor
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    hasher.update(_describe(tensor.codec).encode())
    for array in arrays:
        array.flags.writeable = False                      # shared from now on: never written
        hasher.update(memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8)))
    key = (hasher.digest(), tensor.data_format, tensor.dtype.str)
    with _LOCK:
        existing = _TABLE.get(key)
        if existing is not None:
            return existing
        _TABLE[key] = tensor
        return tensor


def entries() -> int:
    """Tensors currently shared through the table (for tests and memory reports)."""
    return len(_TABLE)
