"""Data-format codecs: the round trip every tensor makes when it is stored in a device format.

Minimal version (float formats only); block-float formats and tile packing follow numerics.md.
"""

import ml_dtypes
import numpy as np

from .dataformat import DataFormat

_FLOAT_CASTS = {
    DataFormat.Float16_b: ml_dtypes.bfloat16,
    DataFormat.Float16: np.float16,
}


def quantize(array, fmt: DataFormat) -> np.ndarray:
    """Return float32 values after a round trip through `fmt`."""
    a = np.asarray(array, dtype=np.float32)
    fmt = DataFormat(fmt)
    if fmt == DataFormat.Float32:
        return a
    cast = _FLOAT_CASTS.get(fmt)
    if cast is None:
        raise NotImplementedError(f"quantize: data format {fmt.name} is not implemented yet")
    return a.astype(cast).astype(np.float32)
