"""Writing a TT device image from a CompiledModel (the archive layout: buda_runtime_sim/runtime/images.py).

The host part is stored as the shared library TVM exports (export_library), not as TVMScript
rebuilt on load: loading it is a dlopen (milliseconds), whereas rebuilding means running
TVM's LLVM build again (seconds), which is what an image exists to skip. The price: the
library is native code for one platform and TVM version, so device.json records both and a
mismatch is refused with a clear error.

Everything this module reads from a CompiledModel goes through `_parts`, the one place that
knows its attributes.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tvm import relax

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.perf.ops import tensor_bytes
from buda_runtime_sim.runtime import image_state, image_tensors
from buda_runtime_sim.runtime.image_archive import CONFIG_JSON, Chunks, write_archive
from buda_runtime_sim.runtime.images import IMAGE_FORMAT, tool_versions
from codegen.artifacts import read_safetensors, safetensors_chunks

from ..device_runtime import module_weight_sources
from ..frontends.imported import split_samples, to_numpy
from ..host_library import export_host_library
from .numerics_json import numerics_to_dict

DESCRIPTOR = "backend_build_binaries/device_desc.json"


@dataclass
class _Parts:
    """What an image needs from a compiled model."""

    name: str
    framework: str
    inputs: list                 # TensorSpec
    output_structure: str
    output_names: list[str]
    weight_names: list[str]
    params: dict                 # main's weights by name
    subgraphs: list              # (DeviceSubgraph, ModuleGraph)
    summary: dict
    index_limits: dict
    numerics: object             # NumericsConfig the model runs with
    config: object               # CompilerConfig
    executable: object           # the Relax VM executable
    compiled: object


def _parts(compiled) -> _Parts:
    sig = compiled.imported
    return _Parts(compiled.name, sig.framework, list(sig.inputs), sig.output_structure, list(sig.output_names),
                  list(compiled.weight_names), sig.params, list(compiled.subgraphs), compiled.summary.to_dict(),
                  dict(compiled.index_limits), compiled.exec_context.numerics, compiled.config, compiled.executable,
                  compiled)


def safe_stem(name: str) -> str:
    """A model name usable as a folder and file name inside the archive."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".")
    return stem or "model"


def weight_formats(graph, numerics) -> dict[str, DataFormat]:
    """The format the device reads each parameter/constant in (the consuming op's weight or output
    format; Float32 when consumers disagree, so nothing is lost)."""
    seen: dict[str, set] = {}
    for line in graph.ops:
        resolved = numerics.resolve(line.op, line.name)
        df = resolved.weight_df if resolved.weight_df is not None else resolved.output_df
        for ref in line.inputs:
            match = re.fullmatch(r'self\.(\w+)|self\.get_constant\("(\w+)"\)', ref)
            if match:
                seen.setdefault(match.group(1) or match.group(2), set()).add(df)
    return {name: dfs.pop() if len(dfs) == 1 else DataFormat.Float32 for name, dfs in seen.items()}


def _placement(compiled, target: dict) -> tuple[dict, dict]:
    """(the perf model's report as JSON, op name -> epoch); an estimate that fails leaves the image
    without a placement (with a warning) rather than failing the save."""
    try:
        report = compiled.perf_report(target["device_config"], harvested_rows=target["harvested_rows"])
    except Exception as exc:  # noqa: BLE001 - the estimate is an extra, the image is still complete
        warnings.warn(f"{compiled.name}: the perf model could not place this model ({type(exc).__name__}: {exc}); "
                      "the image holds no placement", RuntimeWarning, stacklevel=3)
        return {"error": f"{type(exc).__name__}: {exc}", "epochs": []}, {}
    return report.to_dict(), {row.name: row.epoch for row in report.ops}


def _queues(parts: _Parts, epoch_of: dict, formats_by_module: dict) -> list[dict]:
    """DRAM/host queues of the model: parameters (static), tensors crossing epochs (dynamic, DRAM),
    device inputs and outputs (dynamic, host memory), sized in their device format."""
    io_df = parts.numerics.input_df
    out = []
    for sub, graph in parts.subgraphs:
        prefix = graph.module_name
        for name, value in {**graph.parameters, **graph.constants}.items():
            df = formats_by_module[prefix].get(name, DataFormat.Float32)
            out.append({"name": f"{prefix}.{name}", "kind": "static", "location": "dram",
                        "bytes": tensor_bytes(value.shape, df)})
        produced = {}
        for line in graph.ops:
            epoch = epoch_of.get(line.name, epoch_of.get(f"{prefix}.{line.name}"))
            produced[line.output] = (epoch, tuple(line.output_shape), parts.numerics.resolve(line.op, line.name))
            for ref, shape in zip(line.inputs, line.input_shapes):
                if ref in produced and produced[ref][0] is not None and epoch is not None and produced[ref][0] != epoch:
                    out.append({"name": f"{prefix}.{ref}->e{epoch}", "kind": "dynamic", "location": "dram",
                                "bytes": tensor_bytes(shape, produced[ref][2].output_df)})
        shapes = {v: tuple(s) for line in graph.ops for v, s in zip(line.inputs, line.input_shapes)}
        for value in graph.inputs + graph.outputs:
            shape = shapes.get(value) or (produced[value][1] if value in produced else None)
            if shape is not None:
                out.append({"name": f"{prefix}.{value}", "kind": "dynamic", "location": "host",
                            "bytes": tensor_bytes(shape, io_df)})
    return out


def _write_host_library(parts: _Parts, dest: Path) -> None:
    """Export the host part; a model loaded from a library (an image, a cache hit) cannot be
    exported again, so the library file it was loaded from is copied."""
    try:
        export_host_library(parts.executable, dest)
        return
    except Exception as exc:  # noqa: BLE001 - "Module[library] does not support SaveToBytes"
        source = getattr(parts.compiled, "host_library", None)
        if source is None or not Path(source).is_file():
            raise RuntimeError(f"{parts.name}: the host part cannot be exported ({exc}) and its library file is "
                               "gone; compile the model again to save an image") from None
    shutil.copyfile(source, dest)


def _static_types(ty) -> list | None:
    """[(shape, dtype)] of a (nested tuple of) tensor type(s), None if any dim is not static."""
    if isinstance(ty, relax.TupleType):
        parts = [_static_types(f) for f in ty.fields]
        return None if any(p is None for p in parts) else [x for p in parts for x in p]
    if not isinstance(ty, relax.TensorType) or not isinstance(ty.shape, relax.ShapeExpr):
        return None
    try:
        return [([int(d) for d in ty.shape.values], str(ty.dtype))]
    except (TypeError, ValueError):   # a symbolic dim
        return None


def _output_entries(parts: _Parts, sample_inputs) -> list[dict]:
    """Name, shape and dtype of every output: from main's static return type when the Relax module
    is at hand, else by running the sample inputs once."""
    mod = getattr(parts.compiled.imported, "mod", None)
    flat = _static_types(mod["main"].ret_ty) if mod is not None else None
    if flat is not None:
        return [{"name": f"output_{i}", "shape": s, "dtype": d} for i, (s, d) in enumerate(flat)]
    args, kwargs = split_samples(sample_inputs)
    outputs = parts.compiled.run(*args, **kwargs)
    outputs = list(outputs.values()) if isinstance(outputs, dict) else \
        list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    arrays = [to_numpy(o) for o in outputs]
    return [{"name": f"output_{i}", "shape": list(a.shape), "dtype": str(a.dtype)} for i, a in enumerate(arrays)]


def _device_states(parts: _Parts, sample_inputs) -> list[tuple[dict, dict]]:
    """(arrays, metadata) of each subgraph's device state (image_state); a model that has not run
    yet runs the sample inputs once first, so a loaded image starts warm."""
    if not any(p.consteval or p._device_copies for sub, _ in parts.subgraphs
               for p in sub.module.get_parameters()):
        args, kwargs = split_samples(sample_inputs)
        parts.compiled.run(*args, **kwargs)
    return [image_state.capture(sub.module, parts.numerics) for sub, _ in parts.subgraphs]


def _tensors_member(arrays: dict[str, np.ndarray]):
    """A safetensors member streamed into the archive from the arrays themselves (no file, no copy)."""
    chunks = safetensors_chunks(arrays)
    if chunks is None:                     # a dtype only the library can name: built in memory
        from safetensors.numpy import save

        return save(arrays)
    return Chunks(chunks)


def build_image(compiled, img_path, target: dict, sample_inputs, layout: str | None = None,
                metadata: dict | None = None) -> Path:
    """Write `compiled` as a single-model TTI at `img_path` for the board in `target`.
    metadata: extra device.json fields (a cache entry's key and generated-modules folder)."""
    parts = _parts(compiled)
    layout = layout or image_tensors.requested_layout()
    states = _device_states(parts, sample_inputs)
    stem = safe_stem(parts.name)
    with tempfile.TemporaryDirectory(prefix="tti-build-") as tmp:
        tmp = Path(tmp)
        members: dict = {}
        host = f"host/{stem}.so"
        _write_host_library(parts, tmp / "host.so")
        members[host] = tmp / "host.so"
        in_modules = module_weight_sources(parts.subgraphs)
        host_only = [n for n in parts.weight_names if n not in in_modules or layout == image_tensors.TILIZED]
        host_weights = f"tensors/{stem}/host_weights.safetensors"
        members[host_weights] = _tensors_member({n: np.ascontiguousarray(parts.params[n]) for n in host_only})
        subgraphs, formats_by_module = [], {}
        for index, (sub, graph) in enumerate(parts.subgraphs):
            module = graph.module_name
            formats = weight_formats(graph, parts.numerics)
            formats_by_module[module] = formats
            values = sub.preloaded if sub.preloaded is not None else read_safetensors(sub.files.params)
            stored, meta = image_tensors.encode(values, formats, layout)
            state_arrays, state_meta = states[index]
            names = {"source": f"module_files/{stem}/{module}.py", "manifest": f"module_files/{stem}/{module}.json",
                     "params": f"tensors/{stem}/{module}.safetensors",
                     "state": f"tensors/{stem}/{module}.device_state.safetensors"}
            members.update({names["source"]: sub.files.source, names["manifest"]: sub.files.manifest,
                            names["params"]: _tensors_member(stored), names["state"]: _tensors_member(state_arrays)})
            subgraphs.append({**names, "symbol": sub.symbol, "module_name": module,
                              "arg_roles": [list(r) for r in sub.arg_roles], "num_outputs": sub.num_outputs,
                              "tensors": meta, "state_entries": state_meta})
        report, epoch_of = _placement(compiled, target)
        placement = f"placement/{stem}.json"
        queues = _queues(parts, epoch_of, formats_by_module)
        members[placement] = json.dumps({**report, "queues": queues}, indent=1).encode()
        descriptor = {k: target[k] for k in ("arch", "chip_ids", "device_config", "harvested_rows", "grid_size")}
        members[DESCRIPTOR] = json.dumps({**descriptor, "board": target["board"]}, indent=1).encode()
        user_descriptor, user_member = target.get("user_device_descriptor"), None
        if user_descriptor:
            user_member = f"backend_build_binaries/{safe_stem(Path(user_descriptor).name)}"
            members[user_member] = Path(user_descriptor)
        io_df = parts.numerics.input_df.name
        entry = {
            "name": parts.name, "framework": parts.framework, "tensor_layout": layout,
            "inputs": [{"name": s.name, "shape": list(s.shape), "dtype": s.dtype, "data_format": io_df}
                       for s in parts.inputs],
            "outputs": [{**o, "data_format": io_df} for o in _output_entries(parts, sample_inputs)],
            "targets": [], "output_structure": parts.output_structure, "output_names": parts.output_names,
            "weight_names": parts.weight_names, "host_library": host, "host_weights": host_weights,
            "subgraphs": subgraphs, "summary": parts.summary, "index_limits": parts.index_limits,
            "placement": placement, "queues": queues,
            "estimated_samples_per_second": report.get("samples_per_second"),
        }
        entry["members"] = sorted(set(members) - {DESCRIPTOR} - {k for k in members if k.startswith("backend_")})
        config = {"models": {parts.name: {"numerics": numerics_to_dict(parts.numerics),
                                          "compiler_config": parts.config.result_key(),
                                          "placement": report.get("placement_config")}}}
        members[CONFIG_JSON] = json.dumps(config, indent=1, sort_keys=True, default=str).encode()
        device = {"image_format": IMAGE_FORMAT, "versions": tool_versions(), "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
                  "device": {**{k: v for k, v in target.items() if k not in ("board", "user_device_descriptor")},
                             "user_device_descriptor": user_member},
                  "device_descriptor": DESCRIPTOR, "training": False, "models": [entry], **(metadata or {})}
        return write_archive(img_path, members, device)
