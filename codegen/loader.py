"""Importing a generated module file and instantiating its PyBudaModule with its weights."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

from .artifacts import GeneratedFiles, read_manifest, read_params

_counter = itertools.count()


def import_source(path: Path):
    """Import a .py file as a fresh module object (a hand edit is seen on every call)."""
    path = Path(path)
    module_name = f"_tvm_buda_generated.{path.stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(module_name, None)
    return module


def load_module(files: GeneratedFiles, params: dict | None = None):
    """Instantiate the generated PyBudaModule and load its parameters and constants (from `params`
    when the caller already holds them, else from the safetensors file beside the source)."""
    manifest = read_manifest(files)
    source = import_source(files.source)
    cls = getattr(source, manifest["class_name"], None)
    if cls is None:
        raise ImportError(f"{files.source} no longer defines class {manifest['class_name']}")
    instance = cls()
    instance.load_parameter_dict(params if params is not None else read_params(files))
    return instance
