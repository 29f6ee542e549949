"""PyBuda's name for the perf analyzer (`python -m pybuda.tools.perf_analysis`); it lives in perf_analyzer/."""

from perf_analyzer import PerfData, find_report, main

__all__ = ["PerfData", "find_report", "main"]
