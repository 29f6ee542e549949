"""compile_model's cache policy: PYBUDA_ENABLE_TVM_CACHE and PYBUDA_RELOAD_GENERATED_MODULES.

Cold compiles and warm loads of one key are serialised with a file lock, so two processes
compiling the same model both succeed and leave one valid entry.
"""

from __future__ import annotations

import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import filelock

from buda_runtime_sim import env
from codegen import GeneratedFiles, read_graph
from codegen.artifacts import read_params

from ..device_runtime import DeviceSubgraph
from ..host_library import load_host_library
from ..frontends.imported import ImportedModel, TensorSpec
from ..partition_summary import PartitionSummary
from .key import cache_key, model_fingerprint
from .store import Entry, InvalidEntry, load_weights, module_weight_sources, read_entry, remove_entry, write_entry


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
    if fingerprint is None:  # this framework can only be hashed after import: the cache then skips TVM only
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
        write_entry(policy.store_dir, key, compiled, _manifest_extra(compiled))
        compiled.cache_key = key
        return compiled


def _try_load(cache_dir: Path, key: str, config):
    try:
        entry = read_entry(cache_dir, key)
    except FileNotFoundError:
        return None
    except InvalidEntry as exc:
        warnings.warn(f"tvm-buda cache entry {key} in {cache_dir} is unusable ({exc}); rebuilding it",
                      RuntimeWarning, stacklevel=4)
        return None
    return _load(entry, config, copy_modules=True)


def _reload(policy: CachePolicy, key: str, config, name: str):
    try:
        entry = read_entry(policy.load_dir, key, check_modules=False)
    except (FileNotFoundError, InvalidEntry) as exc:
        raise RuntimeError(
            f"PYBUDA_RELOAD_GENERATED_MODULES=1 but there is no usable earlier compile of model '{name}' with these "
            f"inputs and options in {policy.load_dir} ({exc}); compile it once with PYBUDA_ENABLE_TVM_CACHE=1 first"
        ) from None
    return _load(entry, config, copy_modules=False)


def _manifest_extra(compiled) -> dict:
    sig = compiled.imported
    return {
        "model_name": sig.name,
        "framework": sig.framework,
        "inputs": [[s.name, list(s.shape), s.dtype] for s in sig.inputs],
        "output_structure": sig.output_structure,
        "output_names": list(sig.output_names),
        "weight_names": compiled.weight_names,
        "module_dir": compiled.subgraphs[0][0].files.source.parent.name if compiled.subgraphs else "",
        "subgraphs": [
            {"symbol": sub.symbol, "module_name": graph.module_name, "arg_roles": [list(r) for r in sub.arg_roles],
             "num_outputs": sub.num_outputs}
            for sub, graph in compiled.subgraphs
        ],
        "summary": compiled.summary.to_dict(),
        "index_limits": compiled.index_limits,
    }


def _load(entry: Entry, config, copy_modules: bool):
    """Rebuild a CompiledModel from an entry: no framework, no TVM passes."""
    from ..compiled_model import CompiledModel

    m = entry.manifest
    out_dir = Path(config.generated_modules_dir) / m.get("module_dir", "")  # the compile's own folder
    subgraphs = []
    for sg in m["subgraphs"]:
        files = GeneratedFiles.for_module(out_dir, sg["module_name"])
        if copy_modules:
            _restore(entry.module_files(sg["module_name"]), files)
        elif not files.source.is_file():
            raise RuntimeError(f"PYBUDA_RELOAD_GENERATED_MODULES=1 but {files.source} does not exist; "
                               "compile once without the reload flag to generate it")
        sub = DeviceSubgraph(sg["symbol"], files, [tuple(r) for r in sg["arg_roles"]], sg["num_outputs"],
                             preloaded=read_params(files))
        subgraphs.append((sub, read_graph(files)))
    weights = load_weights(entry)
    for source, (index, local) in module_weight_sources(subgraphs).items():
        weights[source] = subgraphs[index][0].preloaded[local]  # one copy, shared by the VM and the module
    executable = load_host_library(entry.host_library)
    signature = ImportedModel(
        m["model_name"], m["framework"], None, weights,
        [TensorSpec(n, tuple(s), d) for n, s, d in m["inputs"]], m["output_structure"], list(m["output_names"]),
    )
    return CompiledModel(signature, executable, m["weight_names"], subgraphs,
                         PartitionSummary.from_dict(m["summary"]), config, cache_key=m["key"],
                         index_limits=m.get("index_limits", {}))


def _restore(source: GeneratedFiles, dest: GeneratedFiles) -> None:
    """Put an entry's generated module files in the user-visible directory (atomic per file).

    The weights file is hard-linked when possible (it is never edited in place and can be large);
    the source and manifest are copied, so a user's edit never touches the cache entry."""
    dest.source.parent.mkdir(parents=True, exist_ok=True)
    for src, dst in zip(source.all(), dest.all()):
        if dst.exists() and os.path.samefile(src, dst):
            continue  # already linked to this entry
        tmp = dst.with_name(f".{dst.name}.restore")
        tmp.unlink(missing_ok=True)
        try:
            if src.suffix != ".safetensors":
                raise OSError("copy, don't link")
            os.link(src, tmp)
        except OSError:
            shutil.copy2(src, tmp)
        tmp.replace(dst)
