"""Writing and reading a generated module's files: <name>.py, <name>.safetensors, <name>.json.

Files are written to a temporary name and renamed into place, so a reader never sees half a file.
The manifest records a SHA-256 of the other two, so edits and corruption are detectable.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from .graph import ModuleGraph, OpLine
from .writer import render

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class GeneratedFiles:
    source: Path
    params: Path
    manifest: Path

    @classmethod
    def for_module(cls, directory: Path, module_name: str) -> "GeneratedFiles":
        directory = Path(directory)
        return cls(directory / f"{module_name}.py", directory / f"{module_name}.safetensors",
                   directory / f"{module_name}.json")

    def all(self) -> list[Path]:
        return [self.source, self.params, self.manifest]


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_module(graph: ModuleGraph, directory: Path, header: str, extra_manifest: dict | None = None) -> GeneratedFiles:
    files = GeneratedFiles.for_module(directory, graph.module_name)
    source = render(graph, header)
    _atomic_write(files.source, lambda p: Path(p).write_text(source))
    tensors = {k: np.ascontiguousarray(v) for k, v in {**graph.parameters, **graph.constants}.items()}
    _atomic_write(files.params, lambda p: save_file(tensors, p))
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "module_name": graph.module_name,
        "class_name": graph.class_name,
        "signature": graph.signature(),
        "source_ops": graph.source_ops,
        "ops": [asdict(op) for op in graph.ops],
        "checksums": {files.source.name: sha256(files.source), files.params.name: sha256(files.params)},
        **(extra_manifest or {}),
    }
    _atomic_write(files.manifest, lambda p: Path(p).write_text(json.dumps(manifest, indent=2, sort_keys=True)))
    return files


def read_manifest(files: GeneratedFiles) -> dict:
    return json.loads(files.manifest.read_text())


def read_params(files: GeneratedFiles) -> dict[str, np.ndarray]:
    return load_file(str(files.params))


def read_graph(files: GeneratedFiles) -> ModuleGraph:
    """The ModuleGraph recorded in a manifest (weights as shape-only placeholders)."""
    manifest = read_manifest(files)
    signature = manifest["signature"]

    def placeholders(shapes: dict) -> dict:
        return {k: np.broadcast_to(np.float32(0), tuple(v)) for k, v in shapes.items()}

    ops = [OpLine(**{**op, "input_shapes": [tuple(s) for s in op["input_shapes"]],
                     "output_shape": tuple(op["output_shape"])}) for op in manifest["ops"]]
    return ModuleGraph(
        manifest["module_name"], manifest["class_name"], list(signature["inputs"]),
        placeholders(signature["parameters"]), placeholders(signature["constants"]), ops,
        list(signature["outputs"]), [tuple(r) for r in signature["arg_roles"]], list(manifest["source_ops"]),
    )


def verify(files: GeneratedFiles) -> list[str]:
    """Names of files whose content no longer matches the manifest's checksums (or are missing)."""
    manifest = read_manifest(files)
    bad = []
    for name, expected in manifest["checksums"].items():
        path = files.source.parent / name
        if not path.is_file() or sha256(path) != expected:
            bad.append(name)
    return bad
