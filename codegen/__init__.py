"""Relax device functions -> readable PyBuda Python modules; writing, loading and reloading them."""

from .artifacts import (GeneratedFiles, StagedParams, content_digest, params_sha256, read_graph, read_manifest, sha256,
                        verify, write_module)
from .graph import ModuleGraph, OpLine
from .loader import LoadedModule, import_source, load_module
from .lower import CodegenError, lower_function, tensor_constant
from .namespace import Namespace, class_name

__all__ = ["CodegenError", "GeneratedFiles", "LoadedModule", "StagedParams", "content_digest", "ModuleGraph", "Namespace", "OpLine",
           "class_name", "import_source", "params_sha256", "load_module", "lower_function", "read_graph", "read_manifest", "sha256", "tensor_constant", "verify",
           "write_module"]
