"""Cache keys: what a compiled result depends on, hashed without exporting the model.

The key covers what the model computes (its graph or traced ops, and its weights), the input shapes and dtypes, every
configuration field that changes results, the model name (it names generated files) and the
tvm-buda / TVM / tvm-ffi versions.
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import blake3
import numpy as np

KEY_LENGTH = 24


def versions() -> dict[str, str]:
    from ..version import __version__

    out = {"tvm_buda": __version__}
    for dist in ("apache-tvm", "apache-tvm-ffi"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    return out


def _exported_program_fingerprint(program, digest) -> None:
    """An ExportedProgram is its graph: the graph's code, its signature and every tensor it holds."""
    import torch

    digest.update(program.graph_module.code.encode())
    digest.update(str(program.graph_signature).encode())
    for name, tensor in sorted({**program.state_dict, **program.constants}.items()):
        if isinstance(tensor, torch.Tensor):
            t = tensor.detach().contiguous()
            digest.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
            digest.update(t.reshape(-1).view(torch.uint8).numpy())
        else:
            digest.update(f"{name}:{type(tensor).__name__}".encode())


def model_fingerprint(model, sample_inputs=()) -> str | None:
    """A hash of what the model computes, or None when it cannot be had without importing the model.

    Model files and protobufs hash as their bytes; a torch module as the ops its forward runs for
    inputs shaped like `sample_inputs` plus its weights (torch_trace.py): no source file is read."""
    inner = getattr(model, "framework_module", model)
    digest = blake3.blake3(max_threads=blake3.blake3.AUTO)
    for extra in ("output_names",):  # wrapper settings that change the graph (TFGraphDefModule)
        if hasattr(model, extra):
            digest.update(repr(getattr(model, extra)).encode())
    if isinstance(inner, (str, Path)) and Path(inner).is_file():
        digest.update(Path(inner).read_bytes())
        return digest.hexdigest()
    if hasattr(inner, "SerializeToString"):  # onnx.ModelProto, tf GraphDef
        digest.update(type(inner).__name__.encode())
        digest.update(inner.SerializeToString())
        return digest.hexdigest()
    torch = sys.modules.get("torch")  # a torch model means torch is imported already
    if torch is None:
        return None
    if isinstance(inner, torch.export.ExportedProgram):
        _exported_program_fingerprint(inner, digest)
        return digest.hexdigest()
    if isinstance(inner, torch.nn.Module):
        from .torch_trace import torch_fingerprint

        return digest.hexdigest() if torch_fingerprint(inner, sample_inputs, digest) else None
    return None


def input_signature(sample_inputs) -> list:
    """[name or position, shape, dtype] per input; dicts (keyword inputs) by name."""
    items = sample_inputs.items() if isinstance(sample_inputs, dict) else enumerate(sample_inputs)
    out = []
    for key, x in items:
        if isinstance(x, dict):
            out.extend(input_signature(x))
            continue
        shape = tuple(int(d) for d in getattr(x, "shape", np.shape(x)))
        dtype = str(getattr(x, "dtype", np.asarray(x).dtype)).removeprefix("torch.").removeprefix("<dtype: '")
        out.append([str(key), list(shape), dtype])
    return out


def cache_key(fingerprint: str, name: str, sample_inputs, config) -> str:
    payload = {
        "model": fingerprint,
        "name": name,
        "inputs": input_signature(sample_inputs),
        "config": config.result_key(),
        "versions": versions(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:KEY_LENGTH]
