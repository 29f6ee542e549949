"""Relax device functions -> readable PyBuda Python modules; writing, loading and reloading them.

Lowering (lower.py) needs TVM's compiler and is imported on first use, so loading a generated
module (a cache hit, an image) does not import it."""

from .artifacts import (GeneratedFiles, StagedParams, content_digest, params_sha256, read_graph, read_manifest, sha256,
                        verify, write_module)
from .graph import ModuleGraph, OpLine
from .loader import LoadedModule, import_source, load_module
from .namespace import Namespace, class_name

_LOWER = ("CodegenError", "lower_function", "tensor_constant")

__all__ = ["CodegenError", "GeneratedFiles", "LoadedModule", "StagedParams", "content_digest", "ModuleGraph", "Namespace", "OpLine",
           "class_name", "import_source", "params_sha256", "load_module", "lower_function", "read_graph", "read_manifest", "sha256", "tensor_constant", "verify",
           "write_module"]


def __getattr__(name):
    if name in _LOWER:
        from . import lower

        return getattr(lower, name)
    raise AttributeError(f"module 'codegen' has no attribute {name!r}")
