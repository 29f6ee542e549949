"""A device program's inputs as device tensors: Tensor.from_array(array, input format), with the
rounding skipped where a value check proves it is the identity.

Most inputs of a training step's backward program are activations the forward program saved,
already rounded to the input format (bfloat16) when the forward produced them; rounding them again
costs two numpy passes and two allocations per input. For bfloat16 the check is two reductions
over the float32 bits, no allocation:

- every value's low 16 bits are zero (an OR over the words): the value is a bfloat16 value, so
  round-to-nearest-even keeps it, whatever its sign, exponent or subnormality (inf and -0 too);
- no NaN (the maximum propagates NaN): the bfloat16 cast does not keep a NaN's payload (ml_dtypes
  gives the sign with the canonical quiet NaN), so an array holding any NaN takes the rounding path.

Every other case (another format, another dtype, a failed check) is Tensor.from_array itself.
"""

from __future__ import annotations

import numpy as np

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.tensor import Tensor, pad

_FLOAT32 = np.dtype(np.float32)


def holds_bfloat16(array: np.ndarray) -> bool:
    """True when `array` (float32, C-contiguous, not empty) is NaN-free and every value is a
    bfloat16 value: rounding it to bfloat16 gives the same bits."""
    words = array.reshape(-1).view(np.uint32)
    return not (int(np.bitwise_or.reduce(words)) & 0xFFFF) and not np.isnan(np.maximum.reduce(words.view(_FLOAT32)))


def device_input(array: np.ndarray, data_format: DataFormat) -> Tensor:
    """Tensor.from_array(array, data_format): the same tensor, cheaper for an array already in bfloat16
    (an input that does not pass costs the check, ~1-2 us, on top)."""
    if (data_format is DataFormat.Float16_b and array.dtype == _FLOAT32 and array.size
            and array.flags.c_contiguous and holds_bfloat16(array)):
        return Tensor(pad(array), array.shape, data_format)
    return Tensor.from_array(array, data_format)
