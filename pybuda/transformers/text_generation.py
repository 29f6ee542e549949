"""The text-generation pipeline decodes greedily unless the call asks to sample.

transformers 5's text-generation pipeline adds `do_sample=True, temperature=0.7` to every call that
does not set `do_sample` (nor does the model's generation config). PyBuda scripts expect what they
write: a call without `do_sample` decodes as `model.generate` would, greedily unless the model's own
generation config says to sample. So the pipeline's sampling defaults are dropped; its other defaults
(`max_new_tokens=256`, the tokenizer's pad token) stay.
"""

from __future__ import annotations

_SAMPLING_DEFAULTS = ("do_sample", "temperature")


def greedy_unless_asked(pipe):
    """Drop the pipeline's own sampling defaults (`_generation_defaults`, set by transformers' Pipeline)."""
    defaults = getattr(pipe, "_generation_defaults", None)
    if not isinstance(defaults, dict):
        raise RuntimeError("pybuda.transformers: this transformers version keeps no _generation_defaults on its "
                           "pipelines; the text-generation defaults cannot be made greedy")
    for key in _SAMPLING_DEFAULTS:
        defaults.pop(key, None)
    return pipe
