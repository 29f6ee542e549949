"""Writing and reading a generated module's files: <name>.py, <name>.safetensors, <name>.json.

Files are written to a temporary name and renamed into place, so a reader never sees half a file.
The manifest records a SHA-256 of the other two, so edits and corruption are detectable.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, replace
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


def content_digest(graphs: list[ModuleGraph], salt: str = "") -> str:
    """SHA-256 of what a compile generates (source, op shapes, weights) plus `salt` (options, model
    name): names the folder the modules are written to, so two different compiles never share a
    file and the same compile always lands in the same place."""
    digest = hashlib.sha256(salt.encode())
    for graph in graphs:
        digest.update(render(replace(graph, module_name=""), "").encode())
        digest.update(json.dumps([asdict(op) for op in graph.ops], sort_keys=True, default=str).encode())
        for name, value in {**graph.parameters, **graph.constants}.items():
            array = np.ascontiguousarray(value)
            digest.update(f"{name}:{array.dtype}:{array.shape}".encode())
            digest.update(array.reshape(-1).view(np.uint8))
    return digest.hexdigest()


def sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


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
    _atomic_write(files.params, lambda p: write_safetensors(tensors, p))
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


_ALIGN = 64  # TVM shares (rather than copies) host buffers aligned to 64 bytes
_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
              "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_, "BF16": None}


_NP_TO_ST = {np.dtype(v): k for k, v in _ST_DTYPES.items() if v is not None}


def write_safetensors(tensors: dict[str, np.ndarray], path) -> None:
    """Write the safetensors format tensor by tensor (safetensors.numpy.save_file first builds
    the whole file in memory: hundreds of MB at compile time for a BERT-base)."""
    header, offset = {}, 0
    for name, array in tensors.items():
        if array.dtype not in _NP_TO_ST:
            return save_file(tensors, str(path))
        header[name] = {"dtype": _NP_TO_ST[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format pads the header to 8 bytes
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for array in tensors.values():
            f.write(np.ascontiguousarray(array).reshape(-1).view(np.uint8))


def read_params(files: GeneratedFiles) -> dict[str, np.ndarray]:
    return read_safetensors(files.params)


def read_safetensors(path) -> dict[str, np.ndarray]:
    """Load a safetensors file into one 64-byte-aligned buffer (views per tensor, no per-tensor copy).

    Same result as safetensors.numpy.load_file, but the buffers can be handed to TVM without copying."""
    with open(path, "rb") as f:
        header_len = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(header_len))
        header.pop("__metadata__", None)
        size = max((v["data_offsets"][1] for v in header.values()), default=0)
        raw = np.empty(size + _ALIGN, dtype=np.uint8)
        start = -raw.ctypes.data % _ALIGN
        data = raw[start:start + size]
        if f.readinto(memoryview(data)) != size:
            raise ValueError(f"{path}: truncated safetensors file")
    out = {}
    for name, info in header.items():
        dtype = _ST_DTYPES.get(info["dtype"])
        if dtype is None:  # formats numpy cannot view: fall back to the library
            return load_file(str(path))
        begin, end = info["data_offsets"]
        out[name] = data[begin:end].view(dtype).reshape(info["shape"])
    return out


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
