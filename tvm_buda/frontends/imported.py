"""What every frontend produces: a Relax module, its weights and the model's signature."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import tvm


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str

    def check(self, value: np.ndarray, model: str) -> None:
        """Raise a clear error when a runtime input does not match what was compiled."""
        if tuple(value.shape) != self.shape:
            raise ValueError(
                f"{model}: input '{self.name}' has shape {tuple(value.shape)}, but the model was compiled for "
                f"{self.shape}; compile again with a sample input of the new shape"
            )
        if str(value.dtype) != self.dtype:
            raise TypeError(
                f"{model}: input '{self.name}' has dtype {value.dtype}, but the model was compiled for {self.dtype}"
            )


@dataclass
class ImportedModel:
    name: str
    framework: str
    mod: tvm.IRModule
    params: dict[str, np.ndarray]           # main's weight parameters, by Relax parameter name
    inputs: list[TensorSpec]
    output_structure: str = "single"        # "single" or "tuple"
    output_names: list[str] = field(default_factory=list)
