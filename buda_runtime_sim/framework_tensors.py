"""Conversions between host arrays and the tensor types of each framework (imported lazily).

Device outputs travel as numpy; each framework's users get their own tensor type back
(`Tensor.to_framework`, and CompiledModel outputs).
"""

import importlib

import numpy as np

FRAMEWORKS = ("pytorch", "tensorflow", "jax", "numpy")
_ALIASES = {"pytorch": "pytorch", "torch": "pytorch", "tensorflow": "tensorflow", "tf": "tensorflow",
            "jax": "jax", "numpy": "numpy", "np": "numpy"}
# framework -> (module to import, pip extra of tvm-buda that installs it)
_MODULES = {"pytorch": ("torch", None), "tensorflow": ("tensorflow", "tensorflow"), "jax": ("jax.numpy", "jax")}


def canonical_framework(framework: str) -> str:
    try:
        return _ALIASES[framework.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown framework {framework!r}; expected one of {', '.join(FRAMEWORKS)}") from None


def to_framework(array, framework: str):
    """A host array (or anything numpy accepts) as a tensor of `framework`; always a copy."""
    framework = canonical_framework(framework)
    array = np.array(array)  # own, writable, contiguous memory: frameworks may keep a view of it
    if framework == "numpy":
        return array
    module = _import(framework)
    if framework == "pytorch":
        if array.dtype.name == "bfloat16":      # (ml_dtypes': torch takes it as its 16-bit patterns)
            return module.from_numpy(array.view(np.int16)).view(module.bfloat16)
        return module.from_numpy(array)
    if framework == "tensorflow":
        return module.convert_to_tensor(array)
    return module.asarray(array)


def _import(framework: str):
    name, extra = _MODULES[framework]
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        hint = f"pip install 'tvm-buda[{extra}]'" if extra else f"pip install {name}"
        raise ImportError(f"converting to {framework} tensors needs {name.split('.')[0]}, which is not installed; "
                          f"{hint}") from exc
