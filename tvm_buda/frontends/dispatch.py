"""Pick the frontend for whatever the user handed us: a wrapper, a framework model or a model file."""

from __future__ import annotations

import sys
from pathlib import Path

from .imported import ImportedModel

SUPPORTED = ("a torch.nn.Module, a torch.export ExportedProgram, an onnx.ModelProto, a Keras model, "
             "a tf.Module or tf.function, a PyBuda wrapper (PyTorchModule, TFModule, TFGraphDefModule, "
             "JaxModule, OnnxModule, TFLiteModule) or a path to a .onnx, .tflite or .pt2 file or a "
             "SavedModel directory")


def import_model(model, sample_inputs: tuple, name: str | None) -> ImportedModel:
    importer = getattr(model, "import_model", None)  # a PyBuda-style wrapper knows its framework
    if importer is not None and getattr(model, "framework_module", None) is not None:
        return importer(sample_inputs, name or model.name)
    name = name or "model"
    if isinstance(model, (str, Path)):
        return import_path(Path(model), sample_inputs, name)
    return import_object(model, sample_inputs, name)


def import_path(path: Path, sample_inputs: tuple, name: str) -> ImportedModel:
    """.onnx, .tflite, .pt2 (torch.export.save) or a SavedModel directory."""
    if path.is_dir() or path.suffix == "":
        from .tensorflow import import_saved_model

        return import_saved_model(path, sample_inputs, name)
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        from .onnx import import_onnx

        return import_onnx(path, sample_inputs, name)
    if suffix == ".tflite":
        from .tflite import import_tflite

        return import_tflite(path, sample_inputs, name)
    if suffix in (".pt2", ".pt", ".ep"):
        from .pytorch import import_pt2

        return import_pt2(path, sample_inputs, name)
    raise ValueError(f"{path}: don't know how to compile a '{suffix}' file; expected .onnx, .tflite, .pt2 or a "
                     "SavedModel directory")


def import_object(model, sample_inputs: tuple, name: str) -> ImportedModel:
    """A framework model object; frameworks the user has not imported are never imported here."""
    kind = framework_of(model)
    if kind == "pytorch":
        from .pytorch import import_pytorch

        return import_pytorch(model, sample_inputs, name)
    if kind == "exported_program":
        from .pytorch import import_exported_program

        return import_exported_program(model, name)
    if kind == "onnx":
        from .onnx import import_onnx

        return import_onnx(model, sample_inputs, name)
    if kind == "tensorflow":
        from .tensorflow import import_tensorflow

        return import_tensorflow(model, sample_inputs, name)
    raise TypeError(f"don't know how to compile a {type(model).__module__}.{type(model).__name__}; expected "
                    f"{SUPPORTED}. Wrap a JAX function in JaxModule(name, fn).")


def framework_of(model) -> str | None:
    """Which framework an object belongs to, judged by its classes (no framework is imported)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(model, torch.nn.Module):
        return "pytorch"
    if torch is not None and isinstance(model, torch.export.ExportedProgram):
        return "exported_program"
    modules = {c.__module__.split(".")[0] for c in type(model).__mro__}
    if "onnx" in modules and hasattr(model, "graph"):
        return "onnx"
    if modules & {"tensorflow", "keras", "tf_keras"}:
        return "tensorflow"
    return None
