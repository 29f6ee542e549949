"""What every frontend produces: a Relax module, its weights and the model's signature."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str

    @classmethod
    def of(cls, name: str, value) -> "TensorSpec":
        array = to_numpy(value)
        return cls(name, tuple(int(d) for d in array.shape), str(array.dtype))

    def check(self, value: np.ndarray, model: str) -> None:
        """Raise a clear error when a runtime input does not match what was compiled."""
        if tuple(value.shape) != self.shape:
            raise ValueError(
                f"{model}: input '{self.name}' has shape {tuple(value.shape)}, but the model was compiled for "
                f"{self.shape}; compile again with a sample input of the new shape"
            )
        if value.dtype != self.dtype and str(value.dtype) != self.dtype:   # (str() of a dtype: ~1.5 us)
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
        """Runtime inputs (positional, by name, or one dict of named inputs) -> validated arrays in compiled order."""
        values = match_inputs([s.name for s in self.inputs], args, kwargs, self.name)
        arrays = []
        for spec in self.inputs:
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


def split_samples(samples) -> tuple[tuple, dict]:
    """A lone Mapping (a dict, a tokenizer's BatchEncoding) stands for keyword inputs, as in PyBuda's
    `push_to_inputs({...})`."""
    if isinstance(samples, Mapping):
        return (), dict(samples)
    samples = tuple(samples)
    if len(samples) == 1 and isinstance(samples[0], Mapping):
        return (), dict(samples[0])
    return samples, {}


def match_inputs(names: list[str], args: tuple, kwargs: dict, model: str) -> dict:
    """Positional and keyword inputs -> {input name: value}, with errors that list the expected names."""
    if not kwargs:
        args, kwargs = split_samples(args)
    if len(args) > len(names):
        raise TypeError(f"{model}: expected {len(names)} inputs ({', '.join(names)}), got {len(args)}")
    values = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{model}: unknown input {key!r}; inputs are {names}")
        if key in values:
            raise TypeError(f"{model}: input {key!r} given twice")
        values[key] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise TypeError(f"{model}: expected {len(names)} inputs, missing {missing}")
    return values


def to_numpy(value) -> np.ndarray:
    """Host array from a torch/TF/JAX/TVM tensor or anything numpy accepts."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":        # numpy has no bfloat16: ml_dtypes', same bytes
            import ml_dtypes
            import torch

            return value.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return value.numpy()
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)
