"""Rebuilding a CompiledModel from an unpacked, verified image: no framework, no frontend, no TVM
passes. Imports the image's generated modules and loads its host library (see images.py: only
load images you trust).

Outputs: PyTorch models give torch tensors as when compiled; every other framework gives numpy
arrays, so loading never imports TensorFlow or JAX.
"""

from __future__ import annotations

from pathlib import Path

from buda_runtime_sim.config import CompilerConfig
from buda_runtime_sim.runtime import image_state, image_tensors
from buda_runtime_sim.runtime.images import ImageError
from codegen import GeneratedFiles, read_graph
from codegen.artifacts import read_params

from ..device_runtime import DeviceSubgraph, module_weight_sources
from ..frontends.imported import ImportedModel, TensorSpec
from ..host_library import load_host_library
from ..partition_summary import PartitionSummary
from .numerics_json import numerics_from_dict


def _config(image, entry) -> tuple[CompilerConfig, object]:
    saved = image.config.get("models", {}).get(entry["name"])
    if saved is None:
        raise ImageError(f"{image.path}: compile_and_runtime_config.json has no entry for model {entry['name']!r}")
    numerics = numerics_from_dict(saved["numerics"])
    device = image.device["device"]
    config = CompilerConfig(default_df_override=numerics.default_df_override, accumulate_df=numerics.accumulate_df,
                            default_math_fidelity=numerics.math_fidelity, fp32_fallback=numerics.fp32_fallback,
                            mixed_precision=list(numerics.rules), device_config=device["device_config"],
                            harvested_rows=list(device["harvested_rows"]))
    return config, numerics


def load_model(image, entry: dict, config: CompilerConfig | None = None, modules_dir: Path | None = None):
    """The CompiledModel stored in `image` under `entry` (an item of device.json's models).

    config: the model's CompilerConfig (a cache hit passes the compile's own; by default one is
    made from the image's numerics and device). modules_dir: run the generated modules in this
    folder instead of the image's (PYBUDA_RELOAD_GENERATED_MODULES: hand edits), with the folder's
    weights where it has them; the image's device state, computed by its own code, is then left out."""
    from ..compiled_model import CompiledModel

    saved_config, numerics = _config(image, entry)
    config = config or saved_config
    subgraphs = []
    for sg in entry["subgraphs"]:
        # the params path names no file: the weights come from memory (image.tensors), never from disk
        files = GeneratedFiles(image.member(sg["source"]), image.root / sg["params"], image.member(sg["manifest"]))
        if modules_dir is not None:
            files = GeneratedFiles.for_module(modules_dir, sg["module_name"])
        try:
            values = read_params(files) if modules_dir is not None and files.params.is_file() else \
                image_tensors.decode(image.tensors(sg["params"]), sg["tensors"])
        except ValueError as exc:
            raise ImageError(f"{image.path}: {sg['params']}: {exc}") from None
        sub = DeviceSubgraph(sg["symbol"], files, [tuple(r) for r in sg["arg_roles"]], sg["num_outputs"],
                             preloaded=values)
        # restored once (the arrays are copied out, the buffer freed); a model loaded again from the
        # same image, like an image without state, computes it in its first run
        if modules_dir is None and sg.get("state") and image.holds_tensors(sg["state"]):
            try:
                image_state.restore(sub.module, numerics, image.tensors(sg["state"]), sg.get("state_entries", {}))
            except (KeyError, TypeError, ValueError) as exc:
                raise ImageError(f"{image.path}: {sg['state']}: {exc}") from None
            image.release_tensors(sg["state"])
        subgraphs.append((sub, read_graph(files)))
    weights = dict(image.tensors(entry["host_weights"]))
    for source, (index, local) in module_weight_sources(subgraphs).items():
        weights.setdefault(source, subgraphs[index][0].preloaded[local])  # one copy, shared with the module
    missing = [n for n in entry["weight_names"] if n not in weights]
    if missing:
        raise ImageError(f"{image.path}: model {entry['name']!r} has no stored value for weight(s) {missing}")
    executable = load_host_library(image.member(entry["host_library"]))
    signature = ImportedModel(entry["name"], entry["framework"], None, weights,
                              [TensorSpec(i["name"], tuple(i["shape"]), i["dtype"]) for i in entry["inputs"]],
                              entry["output_structure"], list(entry["output_names"]))
    compiled = CompiledModel(signature, executable, entry["weight_names"], subgraphs,
                             PartitionSummary.from_dict(entry["summary"]), config,
                             index_limits=entry.get("index_limits", {}))
    compiled.exec_context.numerics = numerics          # as compiled, whatever this process's env says
    compiled.framework = "pytorch" if entry["framework"] == "pytorch" else "numpy"
    compiled.image = image                              # keeps the unpacked folder alive
    compiled.host_library = image.member(entry["host_library"])   # to save it again (it cannot be re-exported)
    return compiled
