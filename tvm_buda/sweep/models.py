"""Model references of a sweep: what MODEL may be, what it expands to, what its content is, and
(on a worker) the model itself with sample inputs and the framework's own answer.

    mlp, onnx_mlp, ...         a built-in model of `tvm-buda demo`
    hf:<model_type>            a tiny random-weight transformers model (hf_models.py), offline
    hf:<model_type>@cfg.json   the same from a config file
    model.onnx / .tflite / .pt2 / a SavedModel directory
    model.py                   a Python file defining build_model() -> (model, sample_inputs) and,
                               for models other than torch modules, golden(model, inputs) -> outputs
    catalogue:<name>           a named list: demo, transformers (every architecture checked to
                               build offline, catalogues/transformers.json), transformers-all;
                               a Python slice picks part of one: catalogue:transformers[::4]
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

CATALOGUES = Path(__file__).parent / "catalogues"
MODEL_FILE_SUFFIXES = (".onnx", ".tflite", ".pt2", ".pt", ".ep")


@dataclass
class LoadedModel:
    """What a job compiles: the model, positional sample inputs, and its framework's outputs."""

    framework: str
    model: object
    inputs: tuple
    golden: Callable[[], list]


def _demo_names() -> list[str]:
    from ..demo import demo_cases

    return [c.name for c in demo_cases()]


def catalogue(name: str) -> list[str]:
    """The model references a `catalogue:<name>[start:stop:step]` stands for."""
    match = re.fullmatch(r"([\w.-]+)(?:\[(-?\d*):(-?\d*)(?::(-?\d*))?\])?", name)
    if match is None:
        raise ValueError(f"catalogue:{name}: expected catalogue:<name> or catalogue:<name>[start:stop:step]")
    bounds = [int(b) if b else None for b in match.groups()[1:]]
    if bounds[2] == 0:
        raise ValueError(f"catalogue:{name}: a slice step cannot be zero")
    return _named_catalogue(match.group(1))[slice(*bounds)]


def _named_catalogue(name: str) -> list[str]:
    if name == "demo":
        return _demo_names()
    if name == "transformers-all":
        from .hf_models import model_types

        return [f"hf:{t}" for t in model_types()]
    path = CATALOGUES / f"{name}.json"
    if not path.is_file():
        known = ["demo", "transformers-all"] + sorted(p.stem for p in CATALOGUES.glob("*.json"))
        raise ValueError(f"unknown catalogue {name!r}; known catalogues: {', '.join(known)}")
    entries = json.loads(path.read_text())["models"]
    if name.startswith("transformers"):   # entries of another transformers version may not exist here
        from .hf_models import model_types

        installed = set(model_types())
        entries = [e for e in entries if e.removeprefix("hf:") in installed]
    return entries


def expand_models(references: list[str]) -> list[str]:
    """Catalogues expanded, files made absolute (workers resolve them on a shared filesystem),
    duplicates dropped; an unknown reference is an error before anything runs."""
    out: list[str] = []
    for ref in references:
        refs = catalogue(ref.split(":", 1)[1]) if ref.startswith("catalogue:") else [ref]
        for item in refs:
            item = _checked(item)
            if item not in out:
                out.append(item)
    return out


def _checked(ref: str) -> str:
    if ref.startswith("hf:"):
        model_type, _, config = ref[3:].partition("@")
        if config:
            config_path = Path(config).expanduser().resolve()
            if not config_path.is_file():
                raise FileNotFoundError(f"{ref}: no config file {config_path}")
            return f"hf:{model_type}@{config_path}"
        return ref
    path = Path(ref).expanduser()
    if path.exists():
        if path.is_dir() or path.suffix.lower() in MODEL_FILE_SUFFIXES + (".py",):
            return str(path.resolve())
        raise ValueError(f"{ref}: unknown model file type {path.suffix!r}; expected "
                         f"{', '.join(MODEL_FILE_SUFFIXES)}, .py or a SavedModel directory")
    if ref in _demo_names():
        return ref
    raise ValueError(f"unknown model {ref!r}: not a file, not hf:<model_type> or catalogue:<name>, and not a "
                     f"built-in model ({', '.join(_demo_names())})")


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def identity_and_content(ref: str) -> tuple[str, str]:
    """(name the job key uses for the model, what its content is): a file by name and bytes, so
    the same file elsewhere on the cluster has the same key; an hf model by its config."""
    if ref.startswith("hf:"):
        from .hf_models import config_json

        model_type, _, config = ref[3:].partition("@")
        name = f"hf:{model_type}" + (f"@{Path(config).name}" if config else "")
        return name, config_json(model_type, config or None)
    path = Path(ref)
    if path.is_absolute():
        return path.name, _file_digest(path)
    from .. import demo, demo_models

    return ref, _file_digest(Path(demo.__file__)) + _file_digest(Path(demo_models.__file__))


def display_name(ref: str) -> str:
    """How the report names a model."""
    if ref.startswith("hf:"):
        model_type, _, config = ref[3:].partition("@")
        return f"hf:{model_type}" + (f"@{Path(config).name}" if config else "")
    return Path(ref).name if Path(ref).is_absolute() else ref


def _torch_golden(model, inputs):
    def golden():
        import torch

        with torch.no_grad():
            out = model(*inputs)
        return _as_list(out)

    return golden


def _as_list(out) -> list:
    if isinstance(out, dict):
        return list(out.values())
    if isinstance(out, (tuple, list)):
        return list(out)
    hidden = getattr(out, "last_hidden_state", None)
    return [hidden if hidden is not None else out]


def _python_file(path: Path) -> LoadedModel:
    spec = importlib.util.spec_from_file_location(f"sweep_model_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "build_model"):
        raise ValueError(f"{path}: a sweep model file defines build_model() -> (model, sample_inputs)")
    model, inputs = module.build_model()
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    if hasattr(module, "golden"):
        return LoadedModel("python", model, inputs, lambda: _as_list(module.golden(model, inputs)))
    import torch

    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"{path}: build_model() returned a {type(model).__name__}; define golden(model, inputs) "
                         "for models other than torch modules")
    return LoadedModel("pytorch", model.eval(), inputs, _torch_golden(model.eval(), inputs))


def load(ref: str, workdir: Path) -> LoadedModel:
    """Build the model a reference names (on the worker, inside the job's process)."""
    if ref.startswith("hf:"):
        from .hf_models import build

        model_type, _, config = ref[3:].partition("@")
        model, inputs = build(model_type, config or None)
        return LoadedModel("pytorch", model, inputs, _torch_golden(model, inputs))
    path = Path(ref)
    if path.is_absolute():
        if path.suffix == ".py":
            return _python_file(path)
        from ..model_files import framework_of_file, reference_outputs, sample_inputs

        _, inputs = sample_inputs(path, [])
        return LoadedModel(framework_of_file(path), str(path), tuple(inputs),
                           lambda: reference_outputs(path, list(inputs)))
    from ..demo import demo_cases

    case = next(c for c in demo_cases() if c.name == ref)
    model, inputs, golden = case.make(workdir)
    return LoadedModel(case.framework, model, tuple(inputs), lambda: _as_list(golden()))
