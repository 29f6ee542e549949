"""The three ways importing a model fails, each with a message that says what to do next."""

from __future__ import annotations

import importlib
import re


class FrameworkNotInstalled(ImportError):
    """An optional framework is missing; the message names the pip extra that brings it."""


class ModelImportError(RuntimeError):
    """A route could not turn the model into Relax (usually an op it does not support)."""


class MalformedModelFile(ValueError):
    """A model file (or directory) could not be read."""


# Python module -> (what users call it, the tvm-buda extra that installs it)
_EXTRAS = {
    "tensorflow": ("TensorFlow", "tensorflow"),
    "tflite": ("the tflite flatbuffer package", "tflite"),
    "jax": ("JAX", "jax"),
    "onnx": ("ONNX", "onnx"),
    "onnxruntime": ("onnxruntime", "onnx"),
}


def require(module: str, needed_for: str, extra: str | None = None):
    """Import an optional framework, or explain which extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        label, default_extra = _EXTRAS.get(module.split(".")[0], (module, "all"))
        extra = extra or default_extra
        raise FrameworkNotInstalled(
            f"{needed_for} needs {label} (Python module '{module}'), which is not installed; "
            f"install it with: pip install 'tvm-buda[{extra}]'"
        ) from exc


FRAMEWORK_NAMES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "onnx": "ONNX", "tflite": "TFLite"}


def import_failed(framework: str, model: str, route: str, exc: BaseException) -> ModelImportError:
    """Wrap an importer failure, naming the ops it could not convert when the message lists them."""
    ops = unsupported_ops(str(exc))
    what = f"unsupported op(s) {', '.join(ops)}" if ops else f"{type(exc).__name__}: {exc}"
    label = FRAMEWORK_NAMES.get(framework, framework)
    error = ModelImportError(f"{label} model '{model}' could not be imported through {route}: {what}")
    error.ops = ops
    return error


_OP_PATTERNS = (
    re.compile(r"operators are not supported (?:in|for) frontend \w+: (.+)"),  # TVM's TFLite and ONNX importers
    re.compile(r"'(tf\.\w+)' op is neither a custom op nor a flex op"),         # TFLiteConverter
    re.compile(r"Unsupported function types \[(.+?)\]"),                       # TVM's torch importer
)


def unsupported_ops(message: str) -> list[str]:
    """Op names quoted by the importers' own 'not supported' messages."""
    found: list[str] = []
    for pattern in _OP_PATTERNS:
        for match in pattern.finditer(message):
            for name in re.split(r"[,\s]+", match.group(1)):
                name = name.strip("'\"[]{}")
                if name and name not in found:
                    found.append(name)
    return found
