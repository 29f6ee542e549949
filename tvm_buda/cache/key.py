"""Cache keys: what a compiled result depends on, hashed without tracing the model.

The key covers the framework graph and its weights, the input shapes and dtypes, every
configuration field that changes results, the model name (it names generated files) and the
tvm-buda / TVM / tvm-ffi versions.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

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


def _torch_fingerprint(module, digest) -> None:
    """Structure, forward source of every module class, and every weight and buffer."""
    digest.update(repr(module).encode())
    digest.update(str(module.training).encode())
    classes = sorted({type(m) for m in module.modules()}, key=lambda c: f"{c.__module__}.{c.__qualname__}")
    files = set()
    for cls in classes:
        digest.update(f"{cls.__module__}.{cls.__qualname__}".encode())
        try:
            files.add(inspect.getsourcefile(cls))
        except TypeError:  # built-in: its name is all there is
            pass
    for path in sorted(f for f in files if f):  # the source files defining forward(): cheap, no parsing
        digest.update(Path(path).read_bytes())
    import torch

    for name, tensor in module.state_dict().items():
        t = tensor.detach().cpu().contiguous()
        digest.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        if t.numel():
            digest.update(t.reshape(-1).view(torch.uint8).numpy())  # raw bytes, no copy


def model_fingerprint(model) -> str | None:
    """A hash of the framework model, or None when it cannot be computed without importing it."""
    inner = getattr(model, "framework_module", model)
    digest = hashlib.sha256()
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
    try:
        import torch
    except ImportError:  # pragma: no cover
        return None
    if isinstance(inner, torch.nn.Module):
        _torch_fingerprint(inner, digest)
        return digest.hexdigest()
    return None


def relax_fingerprint(mod, params: dict[str, np.ndarray]) -> str:
    """Fallback for frameworks hashed after import: the Relax text and the weights."""
    digest = hashlib.sha256(mod.script().encode())
    for name in sorted(params):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(params[name]).tobytes())
    return digest.hexdigest()


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
