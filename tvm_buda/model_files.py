"""Model files for the command line: what inputs a file declares, sample inputs, and the
framework's own answer to compare against (onnxruntime, the TFLite interpreter, torch)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .frontends.errors import MalformedModelFile

FRAMEWORK_BY_SUFFIX = {".onnx": "onnx", ".tflite": "tflite", ".pt2": "pytorch", ".pt": "pytorch", ".ep": "pytorch"}


def framework_of_file(path: Path) -> str:
    if path.is_dir():
        return "tensorflow"
    try:
        return FRAMEWORK_BY_SUFFIX[path.suffix.lower()]
    except KeyError:
        raise ValueError(f"{path}: unknown model file type '{path.suffix}'; expected .onnx, .tflite, .pt2 or a "
                         "SavedModel directory") from None


def declared_inputs(path: Path) -> list[tuple[str, tuple, str]]:
    """(name, shape with None for unknown dims, dtype) per input, as the file declares them."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such model file or directory")
    framework = framework_of_file(path)
    if framework == "onnx":
        from .frontends.onnx import graph_inputs, load_onnx

        return graph_inputs(load_onnx(path))
    if framework == "tflite":
        from .frontends.tflite import flatbuffer_io, parse_flatbuffer, read_tflite_file

        io = flatbuffer_io(parse_flatbuffer(read_tflite_file(path), str(path)))
        return [(n, tuple(None if i in dyn else d for i, d in enumerate(s)), t)
                for n, s, dyn, t in zip(io.input_names, io.shapes, io.dynamic, io.dtypes)]
    if framework == "pytorch":
        from .frontends.pytorch import user_input_values, load_exported_program

        program = load_exported_program(path, (), path.stem)
        names = list(program.graph_signature.user_inputs)
        return [(n, tuple(d if isinstance(d, int) else None for d in v.shape), str(v.dtype).removeprefix("torch."))
                for n, v in zip(names, user_input_values(program))]
    raise ValueError(f"{path}: a SavedModel's inputs cannot be read without TensorFlow tracing; "
                     "give every input with --input-shape NAME=DIMS")


def parse_input_shapes(specs: list[str]) -> list[tuple[str | None, tuple[int, ...]]]:
    """--input-shape values: "1x3x224x224", "1,3,224,224" or "pixel_values=1x3x224x224"."""
    out = []
    for spec in specs:
        name, _, dims = spec.rpartition("=")
        try:
            shape = tuple(int(d) for d in re.split(r"[x,]", dims.strip()) if d)
        except ValueError:
            raise ValueError(f"--input-shape {spec!r}: dims must be integers like 1x3x224x224") from None
        if not shape or any(d <= 0 for d in shape):
            raise ValueError(f"--input-shape {spec!r}: dims must be positive integers like 1x3x224x224")
        out.append((name or None, shape))
    return out


def sample_inputs(path: Path, shapes: list[str], seed: int = 0) -> tuple[list[str], list[np.ndarray]]:
    """Random inputs for a model file: declared shapes, overridden/completed by --input-shape."""
    overrides = parse_input_shapes(shapes)
    try:
        declared = declared_inputs(path)
    except ValueError:
        if not overrides or any(n is None for n, _ in overrides):
            raise
        declared = [(n, s, "float32") for n, s in overrides]
    by_name = {n: s for n, s in overrides if n is not None}
    positional = [s for n, s in overrides if n is None]
    unknown = set(by_name) - {n for n, _, _ in declared}
    if unknown:
        raise ValueError(f"--input-shape names {sorted(unknown)} are not inputs of {path.name}; "
                         f"its inputs are {[n for n, _, _ in declared]}")
    rng = np.random.default_rng(seed)
    names, arrays = [], []
    for i, (name, dims, dtype) in enumerate(declared):
        shape = by_name.get(name) or (positional[i] if i < len(positional) else None) or dims
        if shape is None or None in shape:
            raise ValueError(f"{path.name}: input '{name}' has unknown dims {dims}; give them with "
                             f"--input-shape {name}=DIMS")
        if np.dtype(dtype).kind in "iu":
            arrays.append(rng.integers(0, 100, size=shape).astype(dtype))
        elif np.dtype(dtype).kind == "b":
            arrays.append(rng.integers(0, 2, size=shape).astype(bool))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
        names.append(name)
    return names, arrays


def reference_outputs(path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The framework's own outputs for `inputs` (the golden the simulator is compared with)."""
    framework = framework_of_file(path)
    if framework == "onnx":
        from .frontends.onnx import run_onnxruntime

        return [np.asarray(o) for o in run_onnxruntime(path, tuple(inputs), name=path.stem)]
    if framework == "tflite":
        from .frontends.tflite import run_tflite_file

        return [np.asarray(o) for o in run_tflite_file(path, tuple(inputs), name=path.stem)]
    if framework == "pytorch":
        import torch

        from .frontends.pytorch import load_exported_program

        module = load_exported_program(path, tuple(torch.from_numpy(i) for i in inputs), path.stem).module()
        with torch.no_grad():
            out = module(*[torch.from_numpy(i) for i in inputs])
        outs = out if isinstance(out, (tuple, list)) else [out]
        return [o.detach().numpy() for o in outs]
    raise MalformedModelFile(f"{path}: no reference runner for SavedModel directories in the CLI")
