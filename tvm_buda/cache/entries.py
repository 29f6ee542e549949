"""Cache entries on disk: each one is a TT device image, `<cache_dir>/<key>.tti`.

The entry is written by the image writer (tvm_buda/images/build.py) and read by the image reader
(buda_runtime_sim/runtime/images.py), so it is what `tvm-buda image save` writes for the model:
a zip written atomically, every member BLAKE3-checked on every load, weights memory-mapped, the
first run's device state carried, format- and version-checked. device.json adds a `cache` table:
the key and the name of the compile's generated-modules folder (for the hand-edit workflow).
Only JSON, safetensors, Python source and a shared library: no Python object serialisation.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

from buda_runtime_sim.enums import BackendType
from buda_runtime_sim.perf.boards import get_board
from buda_runtime_sim.runtime.image_tensors import PLAIN
from buda_runtime_sim.runtime.images import ImageError, TTDeviceImage, target_for

SUFFIX = ".tti"


class InvalidEntry(ImageError):
    """An entry that must not be used; the message says why."""


def entry_path(cache_dir: Path, key: str) -> Path:
    return Path(cache_dir) / f"{key}{SUFFIX}"


def _target(config) -> dict:
    """The board an entry is placed on: the compile's device_config (default wh_n150)."""
    board = get_board(config.device_config, config.harvested_rows)
    return target_for("tt0", board.arch, BackendType.Silicon, config=config)


def _samples(compiled, sample_inputs):
    """The sample inputs, or zeros of the model's input shapes when there were none (a model file
    with static shapes): the writer runs the model once to carry its first run's device state."""
    if sample_inputs:
        return sample_inputs
    return tuple(np.zeros(spec.shape, dtype=spec.dtype) for spec in compiled.imported.inputs)


def write_entry(cache_dir: Path, key: str, compiled, sample_inputs) -> Path:
    """Store a freshly compiled model under `key` (replacing any previous entry atomically)."""
    from ..images.build import build_image

    module_dir = compiled.subgraphs[0][0].files.source.parent.name if compiled.subgraphs else ""
    return build_image(compiled, entry_path(cache_dir, key), _target(compiled.config),
                       _samples(compiled, sample_inputs), layout=PLAIN,
                       metadata={"cache": {"key": key, "module_dir": module_dir}})


def open_entry(cache_dir: Path, key: str) -> TTDeviceImage:
    """The verified entry for `key`; FileNotFoundError when there is none, InvalidEntry when it is unusable."""
    path = entry_path(cache_dir, key)
    if not path.is_file():
        raise FileNotFoundError(f"no cache entry {key} in {cache_dir}")
    try:
        image = TTDeviceImage.load_from_disk(path)
    except ImageError as exc:
        raise InvalidEntry(str(exc)) from None
    if image.device.get("cache", {}).get("key") != key or len(image.models) != 1:
        raise InvalidEntry(f"{path} is not the cache entry of key {key} (an image copied or renamed into the cache)")
    return image


def module_dir(image: TTDeviceImage) -> str:
    return image.device["cache"]["module_dir"]


def restore_module_sources(image: TTDeviceImage, dest: Path) -> None:
    """Put the entry's generated sources and manifests in the compile's own folder when they are
    not there, for a user to read and edit (PYBUDA_RELOAD_GENERATED_MODULES); files already there
    are left as they are. The weights stay in the entry."""
    dest.mkdir(parents=True, exist_ok=True)
    for sg in image.model()["subgraphs"]:
        for member in (sg["source"], sg["manifest"]):
            target = dest / Path(member).name
            if not target.exists():
                tmp = target.with_name(f".{target.name}.{time.monotonic_ns()}")
                shutil.copyfile(image.member(member), tmp)
                tmp.replace(target)


def list_entries(cache_dir: Path) -> list[dict]:
    """Summary of every entry (valid or not) for `tvm-buda cache list`."""
    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        return []
    out = []
    for path in sorted(p for p in cache_dir.iterdir() if not p.name.startswith(".")):
        if path.is_dir():  # the directory entries of tvm-buda before entries were images
            out.append({"key": path.name, "path": str(path), "size_bytes": _size(path),
                        "status": "invalid: an entry of an older tvm-buda (a folder); `tvm-buda cache clear` removes it"})
            continue
        if path.suffix != SUFFIX:
            continue
        key = path.stem
        info = {"key": key, "path": str(path), "size_bytes": path.stat().st_size}
        try:
            device = open_entry(cache_dir, key).device
            model = device["models"][0]
            info.update(model=model["name"], framework=model["framework"], created=device.get("created"),
                        status="valid")
        except (FileNotFoundError, ImageError) as exc:
            info.update(status=f"invalid: {exc}")
        out.append(info)
    return out


def remove_entry(cache_dir: Path, key: str) -> bool:
    """Delete an entry (and an older tvm-buda's folder of that key); True if there was one."""
    path, old = entry_path(cache_dir, key), Path(cache_dir) / key
    found = path.is_file() or old.is_dir()
    path.unlink(missing_ok=True)
    if old.is_dir():
        shutil.rmtree(old)
    return found


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
