"""Sweep jobs as data: one JSON spec per (model, data format, fidelity, board), and its key.

A job's key hashes the spec, the model's content (file bytes, the transformers config, ...) and
the versions of tvm-buda, TVM, torch and transformers: the same job on the same software lands in
the same `jobs/<key>/` folder, so a re-run finds it finished; changing any of them runs it anew.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version

KEY_LENGTH = 20
DEFAULT_FORMATS = ("Float16_b",)
DEFAULT_FIDELITIES = ("HiFi3",)
DEFAULT_DEVICE_CONFIGS = ("wh_n150",)


@dataclass(frozen=True)
class JobSpec:
    """What one job compiles and runs. `model` is a resolved model reference (models.py)."""

    model: str
    data_format: str = DEFAULT_FORMATS[0]
    fidelity: str = DEFAULT_FIDELITIES[0]
    device_config: str = DEFAULT_DEVICE_CONFIGS[0]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | dict) -> "JobSpec":
        values = json.loads(text) if isinstance(text, str) else dict(text)
        return cls(**values)


def software_versions() -> dict[str, str]:
    """The versions a result depends on (a new one makes every job run again)."""
    from ..cache.key import versions

    out = dict(versions())
    for dist in ("torch", "transformers"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "none"
    return out


def job_key(spec: JobSpec, model_identity: str, model_content: str, versions: dict[str, str]) -> str:
    """Hash of the spec (the model named by its identity, not its path), content and versions."""
    fields = {**json.loads(spec.to_json()), "model": model_identity}
    text = json.dumps({"spec": fields, "content": model_content, "versions": versions}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def split_list(values, default: tuple[str, ...]) -> tuple[str, ...]:
    """"A,B" strings and lists of them as a tuple of names; None gives the default."""
    if values is None:
        return default
    if isinstance(values, str):
        values = [values]
    out = tuple(v.strip() for value in values for v in str(value).split(",") if v.strip())
    return out or default


def check_names(formats, fidelities, device_configs) -> None:
    """Every format, fidelity and board exists (a typo fails before any job starts)."""
    from buda_runtime_sim.dataformat import DataFormat, MathFidelity
    from buda_runtime_sim.perf.boards import BOARDS

    for name in formats:
        DataFormat.parse(name)
    for name in fidelities:
        MathFidelity.parse(name)
    for name in device_configs:
        if name not in BOARDS:
            raise ValueError(f"unknown device config {name!r}; expected one of {sorted(BOARDS)}")


def expand(models: list[str], formats, fidelities, device_configs) -> list[JobSpec]:
    """Every combination, models outermost (the report reads model by model)."""
    check_names(formats, fidelities, device_configs)
    return [JobSpec(m, f, q, d) for m, f, q, d in itertools.product(models, formats, fidelities, device_configs)]
