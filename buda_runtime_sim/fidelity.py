"""Math fidelity: how many passes the multiplier makes over operand bit slices.

Minimal version: operands are multiplied at full float32 precision.
"""

import numpy as np

from .dataformat import DataFormat, MathFidelity


def fidelity_matmul(a: np.ndarray, b: np.ndarray, fidelity: MathFidelity, accumulate_df: DataFormat) -> np.ndarray:
    return np.matmul(a, b, dtype=np.float32)


def fidelity_multiply(a: np.ndarray, b: np.ndarray, fidelity: MathFidelity) -> np.ndarray:
    return np.multiply(a, b, dtype=np.float32)
