"""Cache entries on disk: one directory per key, written atomically, verified on every load.

<cache_dir>/<key>/
    manifest.json          signature, subgraphs, partition summary, versions, SHA-256 of every file
                           (every file is re-hashed on every load: bit rot keeps size and mtime)
    host-<id>.so           the Relax VM executable (host code, bytecode) from export_library
    weights.safetensors    main's weight parameters
    modules/               the generated PyBuda modules (.py, .safetensors, .json); the weights are
                           hard-linked to the generated folder's (an in-place edit of either fails the
                           entry's checksum and rebuilds it)

Only JSON, safetensors, Python source and a shared library: no Python object serialisation.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

from codegen import GeneratedFiles, read_manifest, sha256
from codegen.artifacts import read_safetensors

from ..host_library import export_host_library
from .key import versions

ENTRY_FORMAT = 1
MANIFEST = "manifest.json"
WEIGHTS = "weights.safetensors"
MODULES = "modules"


class InvalidEntry(Exception):
    """An entry that must not be used; the message says why."""


@dataclass(frozen=True)
class Entry:
    root: Path
    manifest: dict

    @property
    def host_library(self) -> Path:
        return self.root / self.manifest["host_library"]

    @property
    def weights(self) -> Path:
        return self.root / WEIGHTS

    def module_files(self, module_name: str) -> GeneratedFiles:
        return GeneratedFiles.for_module(self.root / MODULES, module_name)


def _files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != MANIFEST)


def write_entry(cache_dir: Path, key: str, compiled, extra: dict) -> Path:
    """Store a freshly compiled model under `key`, replacing any previous entry atomically."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cache_dir / f".tmp-{key}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        host_name = f"host-{uuid.uuid4().hex[:12]}.so"  # unique: dlopen caches libraries by path
        export_host_library(compiled.executable, tmp / host_name)
        params = compiled.imported.params
        in_modules = module_weight_sources(compiled.subgraphs)
        save_file({n: np.ascontiguousarray(params[n]) for n in compiled.weight_names if n not in in_modules},
                  str(tmp / WEIGHTS))
        (tmp / MODULES).mkdir()
        recorded = {}  # SHA-256 codegen recorded for the files it wrote, so they are not hashed again
        for subgraph, _ in compiled.subgraphs:
            recorded.update({f"{MODULES}/{n}": d for n, d in read_manifest(subgraph.files)["checksums"].items()})
        for path in compiled.generated_files:
            _link_or_copy(path, tmp / MODULES / path.name)
        manifest = {
            "format": ENTRY_FORMAT,
            "key": key,
            "versions": versions(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "host_library": host_name,
            **extra,
            "checksums": {str(p.relative_to(tmp)): recorded.get(str(p.relative_to(tmp))) or sha256(p)
                          for p in _files_under(tmp)},
            "stats": {str(p.relative_to(tmp)): _stat(p) for p in _files_under(tmp)},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
        final = cache_dir / key
        if final.exists():
            shutil.rmtree(final)
        os.rename(tmp, final)
        return final
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _link_or_copy(source: Path, dest: Path) -> None:
    """Weights are hard-linked (never edited in place by tvm-buda, large: as _restore does); the rest copied."""
    if source.suffix == ".safetensors":
        try:
            os.link(source, dest)
            return
        except OSError:
            pass
    shutil.copy2(source, dest)


def read_entry(cache_dir: Path, key: str, check_modules: bool = True) -> Entry:
    """The entry for `key`, verified; raises FileNotFoundError (no entry) or InvalidEntry (unusable)."""
    root = cache_dir / key
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise FileNotFoundError(f"no cache entry {key} in {cache_dir}")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidEntry(f"manifest is unreadable ({exc})") from exc
    if manifest.get("format") != ENTRY_FORMAT or manifest.get("versions") != versions():
        raise InvalidEntry(f"written by another version ({manifest.get('versions')}, this is {versions()})")
    stats = manifest.get("stats", {})
    for name, expected in manifest.get("checksums", {}).items():
        if not check_modules and name.startswith(MODULES + "/"):
            continue
        path = root / name
        if not path.is_file():
            raise InvalidEntry(f"{name} is missing")
        size = path.stat().st_size
        if name in stats and size != stats[name][0]:
            raise InvalidEntry(f"{name} does not match its checksum ({size} bytes, {stats[name][0]} were written: "
                               "truncated, corrupted or edited)")
        if sha256(path) != expected:
            raise InvalidEntry(f"{name} does not match its checksum (truncated, corrupted or edited)")
    return Entry(root, manifest)


def _stat(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def module_weight_sources(subgraphs) -> dict[str, tuple[int, str]]:
    """Host weight name -> (subgraph index, name in that module), for weights a generated module holds.

    Those are stored once, in the module's safetensors file, and shared with the VM on load."""
    out = {}
    for index, (subgraph, _) in enumerate(subgraphs):
        for kind, local, source in subgraph.arg_roles:
            if kind == "parameter" and source:
                out.setdefault(source, (index, local))
    return out


def load_weights(entry: Entry) -> dict[str, np.ndarray]:
    """The host-only weights (the rest come from the generated modules' own files)."""
    return read_safetensors(entry.weights)


def list_entries(cache_dir: Path) -> list[dict]:
    """Summary of every entry (valid or not) for `tvm-buda cache list`."""
    out = []
    if not cache_dir.is_dir():
        return out
    for root in sorted(p for p in cache_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        info = {"key": root.name, "path": str(root),
                "size_bytes": sum(p.stat().st_size for p in root.rglob("*") if p.is_file())}
        try:
            read_entry(cache_dir, root.name)
            manifest = json.loads((root / MANIFEST).read_text())
            info.update(model=manifest.get("model_name"), framework=manifest.get("framework"),
                        created=manifest.get("created"), status="valid")
        except (FileNotFoundError, InvalidEntry) as exc:
            info.update(status=f"invalid: {exc}")
        out.append(info)
    return out


def remove_entry(cache_dir: Path, key: str) -> bool:
    root = cache_dir / key
    if root.is_dir():
        shutil.rmtree(root)
        return True
    return False
