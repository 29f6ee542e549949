"""`compile_model`: a framework model (or model file) to a CompiledModel: imported by its frontend,
then built (build.py), through the compile cache (cache/) when it is on."""

from __future__ import annotations

from pathlib import Path

from buda_runtime_sim.config import CompilerConfig

from .compiled_model import CompiledModel, resolve_config


def compile_model(model, sample_inputs=(), config: CompilerConfig | None = None, name: str | None = None) -> CompiledModel:
    """Compile a framework model for the buda backend, using `sample_inputs` for shapes and dtypes
    (model files with static shapes need none)."""
    from .build import build_imported        # (imported here, as before the move: the cache may load
    from .build_state import stage           # a model without the compiler's half)
    from .cache import compile_with_cache
    from .frontends.dispatch import import_model

    if not isinstance(sample_inputs, (tuple, list)):
        sample_inputs = (sample_inputs,)
    sample_inputs = tuple(sample_inputs)
    config = resolve_config(config)
    name = name or default_model_name(model)

    def cold() -> CompiledModel:
        stage("import model")
        return build_imported(import_model(model, sample_inputs, name), config)

    return compile_with_cache(model, sample_inputs, config, name, cold)


def default_model_name(model) -> str:
    """A wrapper's own name, else the model's class name in lower case."""
    inner = getattr(model, "framework_module", model)
    if isinstance(model, (str, Path)):
        return Path(model).stem.split(".")[0] or "model"
    name = getattr(model, "name", None)
    if isinstance(name, str) and name:
        return name
    if isinstance(inner, (str, Path)):
        return Path(inner).stem.split(".")[0] or "model"
    return type(inner).__name__.lower()
