"""PyBuda's acceptance rule for device outputs against a golden (framework) output.

A device output passes if allclose(atol = 0.1 * max|golden|, rtol = 0) holds, or its Pearson
correlation with the golden output is at least 0.99.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PCC_THRESHOLD = 0.99
ATOL_FRACTION = 0.1


def _array(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    elif hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)


def pcc(a, b) -> float:
    """Pearson correlation; 1.0 for two identical constant tensors."""
    a, b = _array(a).ravel(), _array(b).ravel()
    if a.size == 0 or np.array_equal(a, b):
        return 1.0
    if np.std(a) == 0 or np.std(b) == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


@dataclass(frozen=True)
class Comparison:
    passed: bool
    pcc: float
    max_abs_error: float
    atol: float

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return f"{verdict} pcc={self.pcc:.5f} max_abs_err={self.max_abs_error:.4g} (atol {self.atol:.4g})"


def compare(output, golden, pcc_threshold: float = PCC_THRESHOLD, atol_fraction: float = ATOL_FRACTION,
            atol: float | None = None) -> Comparison:
    """PyBuda's rule; `atol` (absolute) replaces `atol_fraction * max|golden|` when given."""
    out, gold = _array(output), _array(golden)
    if out.shape != gold.shape:
        raise ValueError(f"output shape {out.shape} differs from golden shape {gold.shape}")
    if atol is None:
        atol = atol_fraction * float(np.max(np.abs(gold))) if gold.size else 0.0
    err = float(np.max(np.abs(out - gold))) if gold.size else 0.0
    p = pcc(out, gold)
    return Comparison(bool(err <= atol or p >= pcc_threshold), p, err, atol)
