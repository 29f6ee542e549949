"""Relax -> Relax rewrites that prepare a framework graph for the buda device.

Named after PyBuda's relay_passes; they operate on Relax. The pipeline is defined, top to
bottom, in `relay_passes.pipeline`.
"""

from .pipeline import PassPipeline, buda_pass_pipeline

__all__ = ["PassPipeline", "buda_pass_pipeline"]
