"""JAX -> Relax: jax2tf turns the function into a TF graph, which then takes the TFLite route.

TVM 0.27's StableHLO frontend does not work with jaxlib 0.10; PyBuda also went through jax2tf.
"""

from __future__ import annotations

import inspect

from .errors import require
from .imported import ImportedModel, split_samples, to_numpy
from .tf_convert import import_concrete, tf_name, trace


def positional_names(fn, count: int) -> list[str]:
    """The function's parameter names (a bound flax module: its __call__'s), else input_<i>."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:count] if len(params) >= count else [f"input_{i}" for i in range(count)]


def import_jax(fn, sample_inputs, name: str) -> ImportedModel:
    """Any JAX-traceable callable of arrays (a closure over its params, a bound flax module, ...)."""
    require("jax", "JaxModule")
    require("tensorflow", "JaxModule (JAX reaches TVM through jax2tf and TFLite)", extra="jax")
    from jax.experimental import jax2tf

    if not callable(fn):
        raise TypeError(f"JaxModule {name!r}: expected a JAX-traceable callable, got {type(fn).__name__}")
    args, kwargs = split_samples(sample_inputs)
    args = tuple(to_numpy(a) for a in args)
    kwargs = {k: to_numpy(v) for k, v in kwargs.items()}
    names = positional_names(fn, len(args))
    converted = jax2tf.convert(fn, with_gradient=False)
    concrete = trace(converted, args, kwargs, names, name)
    samples = dict(zip(names, args)) | kwargs
    return import_concrete(concrete, {tf_name(n): n for n in samples}, samples, "jax", name)
