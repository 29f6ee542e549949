"""PyBuda's tools (`pybuda.tools.tti_merge`, ...)."""
