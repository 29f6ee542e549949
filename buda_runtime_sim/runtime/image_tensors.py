"""Parameters of a TTI in the device's byte layout (PYBUDA_TTI_BACKEND_[TILIZED_]FORMAT=1).

Each float tensor is stored as the tile bytes the device holds (formats.pack_tiles: 32x32 tiles,
faces in order, block-float exponents first) in the data format the device reads it in; the
layout, format and logical shape are recorded in device.json. Decoding gives exactly
quantize(value, format), the values the device computes with. Integer tensors stay plain.
Container: safetensors (a U8 tensor of tile bytes per parameter), no pickle.
"""

from __future__ import annotations

import json

import numpy as np

from ..dataformat import DataFormat
from ..env import TTI_BACKEND_FORMAT, TTI_BACKEND_TILIZED_FORMAT
from ..formats import pack_tiles, unpack_tiles

PLAIN, TILIZED = "plain", "tilized"
_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
           "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def parse_safetensors(data: np.ndarray) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file held in `data` (uint8), as views (no copy). The file comes
    from an image, so every offset, dtype and shape is checked before it is used."""
    def bad(why: str):
        return ValueError(f"not a valid safetensors file: {why}")

    if data.size < 8:
        raise bad("shorter than its header length")
    header_len = int(data[:8].view("<u8")[0])
    if header_len > data.size - 8:
        raise bad("header longer than the file")
    try:
        header = json.loads(data[8:8 + header_len].tobytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise bad(f"header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise bad("header is not a table")
    header.pop("__metadata__", None)
    body, out = data[8 + header_len:], {}
    for name, info in header.items():
        try:
            dtype = np.dtype(_DTYPES[info["dtype"]])
            shape = [int(d) for d in info["shape"]]
            begin, end = (int(o) for o in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise bad(f"tensor {name!r} has no known dtype, shape and data_offsets") from None
        if min(shape, default=0) < 0 or not 0 <= begin <= end <= body.size or \
                int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != end - begin:
            raise bad(f"tensor {name!r}: shape {shape} of {dtype} does not fit bytes {begin}..{end} of {body.size}")
        out[name] = body[begin:end].view(dtype).reshape(shape)
    return out


def requested_layout() -> str:
    """The layout the environment asks for (the simulator has one device layout: tiles)."""
    on = TTI_BACKEND_FORMAT.get_int() == 1 or TTI_BACKEND_TILIZED_FORMAT.get_int() == 1
    return TILIZED if on else PLAIN


def encode(tensors: dict[str, np.ndarray], formats: dict[str, DataFormat], layout: str):
    """(arrays to store, per-tensor metadata). `formats`: the device format of each tensor."""
    stored, meta = {}, {}
    for name, array in tensors.items():
        array = np.asarray(array)
        entry = {"shape": list(array.shape), "dtype": str(array.dtype), "layout": PLAIN}
        df = formats.get(name)
        if layout == TILIZED and df is not None and array.dtype == np.float32:
            stored[name] = np.frombuffer(pack_tiles(array, df), dtype=np.uint8)
            entry.update(layout=TILIZED, data_format=df.name)
        else:
            stored[name] = np.ascontiguousarray(array)
        meta[name] = entry
    return stored, meta


def decode(stored: dict[str, np.ndarray], meta: dict) -> dict[str, np.ndarray]:
    """Host arrays back from what `encode` stored (tile bytes unpacked to float32)."""
    out = {}
    for name, entry in meta.items():
        if name not in stored:
            raise ValueError(f"tensor {name!r} is listed in device.json but not stored")
        array = stored[name]
        if entry.get("layout") == TILIZED:
            fmt = DataFormat.from_json(entry["data_format"])
            array = unpack_tiles(np.ascontiguousarray(array).tobytes(), fmt, entry["shape"])
        elif list(array.shape) != list(entry["shape"]):
            raise ValueError(f"tensor {name!r} has shape {list(array.shape)}, device.json says {entry['shape']}")
        out[name] = array
    return out
