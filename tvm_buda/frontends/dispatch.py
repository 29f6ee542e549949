"""Pick the frontend for whatever the user handed us."""

from __future__ import annotations

from .imported import ImportedModel


def import_model(model, sample_inputs: tuple, name: str | None) -> ImportedModel:
    wrapped = getattr(model, "framework_module", None)  # a PyBuda-style wrapper (PyTorchModule, ...)
    if wrapped is not None:
        name = name or model.name
        model = wrapped
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        torch = None
    if torch is not None and isinstance(model, torch.nn.Module):
        from .pytorch import import_pytorch

        return import_pytorch(model, sample_inputs, name or type(model).__name__.lower())
    raise TypeError(
        f"don't know how to compile a {type(model).__module__}.{type(model).__name__}; "
        "expected a torch.nn.Module or a PyBuda module wrapper (PyTorchModule)"
    )
