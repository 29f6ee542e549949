"""Writing and reading a generated module's files: <name>.py, <name>.safetensors, <name>.json.

Files are written to a temporary name and renamed into place, so a reader never sees half a file.
The manifest records a SHA-256 of the other two, so edits and corruption are detectable.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import ml_dtypes
import numpy as np
from safetensors.numpy import load_file, save, save_file

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


def module_tensors(graph: ModuleGraph) -> dict[str, np.ndarray]:
    """The weights and constants a module's safetensors file holds, in file order."""
    return {k: np.ascontiguousarray(v) for k, v in {**graph.parameters, **graph.constants}.items()}


def params_sha256(graph: ModuleGraph) -> str:
    """SHA-256 of the safetensors file write_module writes for `graph`, computed without writing it."""
    tensors = module_tensors(graph)
    head = _safetensors_head(tensors)
    if head is None:
        return hashlib.sha256(save(tensors)).hexdigest()
    digest = hashlib.sha256(head)
    for array in tensors.values():
        digest.update(array.reshape(-1).view(np.uint8))
    return digest.hexdigest()


def content_digest(graphs: list[ModuleGraph], salt: str = "", params_digests: list[str] | None = None) -> str:
    """SHA-256 of what a compile generates (source, op shapes, and each weights file through its own
    SHA-256, `params_digests` when the caller has them) plus `salt` (options, model name): names the
    folder the modules are written to, so two different compiles never share a file and the same
    compile always lands in the same place."""
    digest = hashlib.sha256(salt.encode())
    params_digests = params_digests or [params_sha256(g) for g in graphs]
    for graph, params_digest in zip(graphs, params_digests, strict=True):
        digest.update(render(replace(graph, module_name=""), "").encode())
        digest.update(json.dumps(graph.op_records(), sort_keys=True, default=str).encode())
        digest.update(params_digest.encode())
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


class StagedParams:
    """Writes the modules' safetensors files on a second thread, under temporary names in
    `directory`, while the caller hashes the same tensors to name the folder they go to (file
    writes and SHA-256 both release the GIL: on BERT-base the 340 MB write and its hash then take
    the time of the longer one, not of both). write_module moves each file into place; files
    not moved are removed on exit."""

    def __init__(self, graphs: list[ModuleGraph], directory: Path):
        self.directory = Path(directory)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tvm_buda_params")
        self._futures = [self._pool.submit(self._write, graph) for graph in graphs]

    def _write(self, graph: ModuleGraph) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{graph.module_name}.safetensors.", dir=self.directory)
        os.close(fd)
        try:
            write_safetensors(module_tensors(graph), tmp)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return Path(tmp)

    def path(self, index: int) -> Path:
        """The written temporary file of graph `index` (waits for it; re-raises a failed write)."""
        return self._futures[index].result()

    def __enter__(self) -> "StagedParams":
        return self

    def __exit__(self, *exc) -> None:
        self._pool.shutdown(wait=True)
        for future in self._futures:
            if future.exception() is None:
                future.result().unlink(missing_ok=True)  # not moved into place: the compile failed


def write_module(graph: ModuleGraph, directory: Path, header: str, extra_manifest: dict | None = None,
                 params_digest: str | None = None, staged_params: Path | None = None) -> GeneratedFiles:
    """params_digest: params_sha256(graph) when the caller has it (the weights are not hashed twice);
    staged_params: the weights file already written (StagedParams), moved into place here."""
    files = GeneratedFiles.for_module(directory, graph.module_name)
    source = render(graph, header).encode()
    _atomic_write(files.source, lambda p: Path(p).write_bytes(source))
    if staged_params is not None:
        os.replace(staged_params, files.params)  # same file system: atomic, as _atomic_write's own rename
    else:
        _atomic_write(files.params, lambda p: write_safetensors(module_tensors(graph), p))
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "module_name": graph.module_name,
        "class_name": graph.class_name,
        "signature": graph.signature(),
        "source_ops": graph.source_ops,
        "ops": graph.op_records(),
        "checksums": {files.source.name: hashlib.sha256(source).hexdigest(),
                      files.params.name: params_digest or sha256(files.params)},
        **(extra_manifest or {}),
    }
    _atomic_write(files.manifest, lambda p: Path(p).write_text(json.dumps(manifest, indent=2, sort_keys=True)))
    return files


def read_manifest(files: GeneratedFiles) -> dict:
    return json.loads(files.manifest.read_text())


_ALIGN = 64  # TVM shares (rather than copies) host buffers aligned to 64 bytes
# (bfloat16 as ml_dtypes': a bfloat16 model's weights are written tensor by tensor and read back as
# views like the others, not through the library, which builds the whole file in memory)
_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
              "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_, "BF16": ml_dtypes.bfloat16}


_NP_TO_ST = {np.dtype(v): k for k, v in _ST_DTYPES.items() if v is not None}


def _safetensors_head(tensors: dict[str, np.ndarray]) -> bytes | None:
    """Length and header of the file write_safetensors writes (tensors in the dict's order), or None
    when a dtype is one numpy has no name for here (the library writes those)."""
    header, offset = {}, 0
    for name, array in tensors.items():
        if array.dtype not in _NP_TO_ST:
            return None
        header[name] = {"dtype": _NP_TO_ST[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format pads the header to 8 bytes
    return len(text).to_bytes(8, "little") + text


def safetensors_chunks(tensors: dict[str, np.ndarray]) -> list | None:
    """The safetensors file of `tensors` as its pieces in order: the header, then each tensor's
    bytes (views where the arrays are contiguous); None for a dtype _safetensors_head cannot name."""
    head = _safetensors_head(tensors)
    if head is None:
        return None
    return [head] + [np.ascontiguousarray(array).reshape(-1).view(np.uint8) for array in tensors.values()]


def write_safetensors(tensors: dict[str, np.ndarray], path) -> None:
    """Write the safetensors format tensor by tensor (safetensors.numpy.save_file first builds
    the whole file in memory: hundreds of MB at compile time for a BERT-base)."""
    chunks = safetensors_chunks(tensors)
    if chunks is None:
        return save_file(tensors, str(path))
    with open(path, "wb") as f:
        for chunk in chunks:
            f.write(chunk)


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
