"""PyBuda tools: perf_analysis (terminal perf analyzer), tti_merge (merge device images)."""
