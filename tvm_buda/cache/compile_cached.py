"""compile_model's cache policy: PYBUDA_ENABLE_TVM_CACHE and PYBUDA_RELOAD_GENERATED_MODULES.

Cold compiles and warm loads of one key are serialised with a file lock, so two processes
compiling the same model both succeed and leave one valid entry.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import filelock

from buda_runtime_sim import env
from buda_runtime_sim.runtime.images import ImageError

from .entries import InvalidEntry, module_dir, open_entry, remove_entry, restore_module_sources, write_entry
from .key import cache_key, model_fingerprint


def default_cache_dir(config) -> Path:
    return Path(config.generated_modules_dir) / "tvm_cache"


@dataclass(frozen=True)
class CachePolicy:
    enabled: bool
    clear_first: bool
    reload: bool
    store_dir: Path
    load_dir: Path

    @classmethod
    def from_env(cls, config) -> "CachePolicy":
        mode = env.ENABLE_TVM_CACHE.get_int()
        if mode not in (-1, 0, 1):
            raise ValueError(f"{env.ENABLE_TVM_CACHE.name} must be 1, 0 or -1, got {mode}")
        store = Path(config.tvm_graph_store_path) if config.tvm_graph_store_path else default_cache_dir(config)
        load = Path(config.tvm_graph_load_path) if config.tvm_graph_load_path else store
        return cls(mode != 0, mode == -1, env.RELOAD_GENERATED_MODULES.get_int() == 1, store, load)


def compile_with_cache(model, sample_inputs, config, name: str, cold: Callable[[], object]):
    """Return a CompiledModel, from the cache when the policy allows, else from `cold()`."""
    policy = CachePolicy.from_env(config)
    if not (policy.enabled or policy.reload):
        return cold()
    fingerprint = model_fingerprint(model, sample_inputs)
    if fingerprint is None:  # this framework can only be hashed after import: no cache
        return cold()
    key = cache_key(fingerprint, name, sample_inputs, config)
    if policy.reload:
        return _reload(policy, key, config, name)
    policy.store_dir.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(policy.store_dir / f"{key}.lock")):
        if policy.clear_first:
            remove_entry(policy.store_dir, key)
        else:
            warm = _try_load(policy.load_dir, key, config)
            if warm is not None:
                return warm
        compiled = cold()
        _store(policy.store_dir, key, compiled, sample_inputs)
        compiled.cache_key = key
        return compiled


def _store(cache_dir: Path, key: str, compiled, sample_inputs) -> None:
    """Write the entry; a failure (disk full, a model the image writer cannot take) costs the
    entry, not the compile."""
    try:
        write_entry(cache_dir, key, compiled, sample_inputs)
    except Exception as exc:  # noqa: BLE001 - the compiled model is fine without its entry
        warnings.warn(f"tvm-buda cache: could not store model '{compiled.name}' as entry {key} in {cache_dir} "
                      f"({type(exc).__name__}: {exc}); it is compiled, the next run compiles it again",
                      RuntimeWarning, stacklevel=4)


def _try_load(cache_dir: Path, key: str, config):
    try:
        image = open_entry(cache_dir, key)
        compiled = _load(image, key, config)
    except FileNotFoundError:
        return None
    except InvalidEntry as exc:
        warnings.warn(f"tvm-buda cache entry {key} in {cache_dir} is unusable ({exc}); rebuilding it",
                      RuntimeWarning, stacklevel=4)
        return None
    restore_module_sources(image, Path(config.generated_modules_dir) / module_dir(image))
    return compiled


def _reload(policy: CachePolicy, key: str, config, name: str):
    try:
        image = open_entry(policy.load_dir, key)
    except (FileNotFoundError, InvalidEntry) as exc:
        raise RuntimeError(
            f"PYBUDA_RELOAD_GENERATED_MODULES=1 but there is no usable earlier compile of model '{name}' with these "
            f"inputs and options in {policy.load_dir} ({exc}); compile it once with PYBUDA_ENABLE_TVM_CACHE=1 first"
        ) from None
    folder = Path(config.generated_modules_dir) / module_dir(image)
    missing = [sg["source"] for sg in image.model()["subgraphs"] if not (folder / Path(sg["source"]).name).is_file()]
    if missing:
        raise RuntimeError(f"PYBUDA_RELOAD_GENERATED_MODULES=1 but {folder} has no {', '.join(Path(m).name for m in missing)}; "
                           "compile once without the reload flag to generate it")
    return _load(image, key, config, modules_dir=folder)


def _load(image, key: str, config, modules_dir: Path | None = None):
    """The entry's CompiledModel: no framework, no TVM passes (the image reader's loader)."""
    from ..images.load import load_model

    try:
        compiled = load_model(image, image.model(), config=config, modules_dir=modules_dir)
    except ImageError as exc:
        raise InvalidEntry(str(exc)) from None
    compiled.framework = image.model()["framework"]   # outputs in the model's framework, as when compiled
    compiled.cache_key = key
    return compiled
