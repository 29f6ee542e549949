"""Convolution weights as the device holds them: one [kH*kW*Cin/groups, Cout] matrix.

PyBuda lowered a convolution to matrix work on channels-last tiles: output pixels as rows,
channels as columns, and the kernel as a matrix whose rows run over (kh, kw, input channel) and
whose columns are the output channels (group g owns the g-th block of Cout/groups columns).
Stored that way a 3x3 kernel pads to tiles like any matrix, instead of every 3x3 slice padding
to a 32x32 tile (113x its size). A transposed convolution is held as the matrix of the ordinary
convolution it runs as (flipped kernel over the stride-spread input).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .common import OpArgumentError


@dataclass(frozen=True)
class ConvWeightLayout:
    """Framework kernel -> device matrix; hashable, so a parameter keeps one device copy per layout.
    Conv2d kernels are (Cout, Cin/g, kH, kW); Conv2dTranspose kernels (Cin, Cout/g, kH, kW)."""

    transposed: bool
    groups: int

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        return weight_matrix(weights, self.transposed, self.groups)


def conv_kernel(weights: np.ndarray, transposed: bool, groups: int) -> np.ndarray:
    """The (Cout, Cin/g, kH, kW) kernel of the ordinary convolution a layer runs as."""
    weights = np.asarray(weights, dtype=np.float32)
    if weights.ndim != 4:
        raise OpArgumentError("weights", f"must be 4-D (a conv kernel) or a 2-D weight matrix, got shape "
                                         f"{weights.shape}")
    if not transposed:
        return weights
    cin, cout_g = weights.shape[:2]
    if cin % groups:
        raise OpArgumentError("weights", f"of shape {weights.shape} do not split into {groups} group(s)")
    per_group = weights.reshape((groups, cin // groups, cout_g) + weights.shape[2:])
    flipped = np.flip(per_group.swapaxes(1, 2), axis=(-2, -1))  # (G, Cout/G, Cin/G, kH, kW)
    return np.ascontiguousarray(flipped).reshape((groups * cout_g, cin // groups) + weights.shape[2:])


def weight_matrix(weights: np.ndarray, transposed: bool = False, groups: int = 1) -> np.ndarray:
    """[kH*kW*Cin/g, Cout] for a framework kernel (see ConvWeightLayout)."""
    kernel = conv_kernel(weights, transposed, groups)
    return np.ascontiguousarray(kernel.transpose(2, 3, 1, 0)).reshape(-1, kernel.shape[0])


def matrix_as_kernel(matrix: np.ndarray, kernel_size: tuple[int, int]) -> np.ndarray:
    """The (Cout, Cin/g, kH, kW) view of a weight matrix (no copy)."""
    kh, kw = kernel_size
    rows, cout = matrix.shape
    if rows % (kh * kw):
        raise OpArgumentError("weights", f"matrix of shape {matrix.shape} has {rows} rows, not a multiple of the "
                                         f"{kh}x{kw} kernel's {kh * kw} taps")
    return matrix.reshape(kh, kw, rows // (kh * kw), cout).transpose(3, 2, 0, 1)
