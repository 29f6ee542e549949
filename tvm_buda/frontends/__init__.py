"""Framework -> Relax importers. Each returns an ImportedModel; frameworks are imported lazily."""

from .imported import ImportedModel, TensorSpec

__all__ = ["ImportedModel", "TensorSpec"]
