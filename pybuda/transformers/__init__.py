"""`pybuda.transformers`: Hugging Face helpers that run models on the simulated device (imports transformers)."""

from . import pipeline

__all__ = ["pipeline"]
