"""Importing a generated module file and instantiating its PyBudaModule with its weights.

A loaded module is pinned to the file contents it was imported from: `changed_files()` tells
when a file on disk no longer holds them (a hand edit, another compile), so the caller can
refuse or re-import instead of silently running different code.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import os
import types
from dataclasses import dataclass
from pathlib import Path

from .artifacts import GeneratedFiles, read_manifest, read_params, sha256
from .liveness import with_frees

_counter = itertools.count()


def import_source(path: Path, text: bytes | None = None):
    """Execute a generated module's source (`text`, else the file) as a fresh module object, its
    forward() freeing each value after its last use (liveness.py; the file is not changed)."""
    path = Path(path)
    text = path.read_bytes() if text is None else text
    module = types.ModuleType(f"_tvm_buda_generated.{path.stem}_{next(_counter)}")
    module.__file__ = str(path)
    tree = with_frees(ast.parse(text, str(path)))
    exec(compile(tree, str(path), "exec"), module.__dict__)  # noqa: S102 - our own generated code
    return module


def _stat(path: Path):
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino


@dataclass
class FilePin:
    """A file's content as it was when loaded: SHA-256, and the stat that proves it unchanged cheaply."""

    path: Path
    digest: str
    stat: tuple

    def changed(self) -> bool:
        """True when the file holds other content now (a missing file is not a change: the loaded
        module no longer needs it)."""
        try:
            stat = _stat(self.path)
        except FileNotFoundError:
            return False
        if stat == self.stat:
            return False
        if sha256(self.path) != self.digest:
            return True
        self.stat = stat  # rewritten with the same content (another compile of the same model)
        return False


class LoadedModule:
    """A generated PyBudaModule, instantiated with its weights (`params` when the caller already
    holds them, else from the safetensors file beside the source), pinned to its files. With
    `params` given the weights file need not exist (a device image holds them in memory)."""

    def __init__(self, files: GeneratedFiles, params: dict | None = None):
        manifest = read_manifest(files)
        source_stat = _stat(files.source)
        text = files.source.read_bytes()
        params_stat = _stat(files.params) if params is None or files.params.exists() else None
        cls = getattr(import_source(files.source, text), manifest["class_name"], None)
        if cls is None:
            raise ImportError(f"{files.source} no longer defines class {manifest['class_name']}")
        self.instance = cls()
        self.instance.load_parameter_dict(params if params is not None else read_params(files))
        self.pins = [FilePin(files.source, hashlib.sha256(text).hexdigest(), source_stat)]
        if params_stat is not None:
            params_digest = manifest["checksums"].get(files.params.name) or sha256(files.params)
            self.pins.append(FilePin(files.params, params_digest, params_stat))

    def changed_files(self) -> list[Path]:
        return [pin.path for pin in self.pins if pin.changed()]


def load_module(files: GeneratedFiles, params: dict | None = None):
    """The generated PyBudaModule instance (unpinned; see LoadedModule)."""
    return LoadedModule(files, params).instance
