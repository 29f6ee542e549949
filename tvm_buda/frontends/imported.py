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
    output_structure: str = "single"        # "single", "tuple" or "dict"
    output_names: list[str] = field(default_factory=list)

    def bind_inputs(self, args: tuple, kwargs: dict) -> list[np.ndarray]:
        """Runtime inputs (positional and/or by name) -> arrays in compiled order, validated."""
        specs = self.inputs
        if len(args) > len(specs):
            names = ", ".join(s.name for s in specs)
            raise TypeError(f"{self.name}: expected {len(specs)} inputs ({names}), got {len(args)}")
        values = dict(zip([s.name for s in specs], args))
        for key, value in kwargs.items():
            if key not in {s.name for s in specs}:
                raise TypeError(f"{self.name}: unknown input {key!r}; inputs are {[s.name for s in specs]}")
            if key in values:
                raise TypeError(f"{self.name}: input {key!r} given twice")
            values[key] = value
        missing = [s.name for s in specs if s.name not in values]
        if missing:
            raise TypeError(f"{self.name}: expected {len(specs)} inputs, missing {missing}")
        arrays = []
        for spec in specs:
            array = to_numpy(values[spec.name])
            spec.check(array, self.name)
            arrays.append(array)
        return arrays

    def pack_outputs(self, outputs: list):
        """Framework tensors, flat -> the structure the framework model returns."""
        if self.output_structure == "single" and len(outputs) == 1:
            return outputs[0]
        if self.output_structure == "dict":
            return dict(zip(self.output_names, outputs))
        return tuple(outputs)


def to_numpy(value) -> np.ndarray:
    """Host array from a torch/TF/JAX/TVM tensor or anything numpy accepts."""
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        return np.asarray(value.numpy())
    return np.asarray(value)
