"""TensorFlow -> Relax: Keras models, tf.Modules, tf.functions, SavedModel directories and GraphDefs.

Each source becomes a callable plus input names; tf_convert traces it with the sample shapes and
takes it through TFLite.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from .errors import MalformedModelFile, require
from .imported import ImportedModel, match_inputs, split_samples, to_numpy
from .tf_convert import import_concrete, tf_name, trace


def is_keras_model(model) -> bool:
    return any(c.__module__.startswith(("keras", "tf_keras")) and c.__name__ in ("Model", "Layer")
               for c in type(model).__mro__)


def call_tf_model(model, args: tuple, kwargs: dict):
    """Call a TF model the way its kind expects: Keras takes one tensor, a list or a dict; others take arguments."""
    if not is_keras_model(model):
        return model(*args, **kwargs)
    if kwargs:
        return model(dict(kwargs), training=False)
    return model(args[0] if len(args) == 1 else list(args), training=False)


def positional_names(model, count: int) -> list[str]:
    """Input names for positional inputs: Keras input names, else the Python parameter names."""
    if is_keras_model(model):
        try:
            names = [t.name for t in model.inputs]
        except (AttributeError, ValueError):
            names = []
        if len(names) == count:
            return names
    target = getattr(model, "python_function", None) or model  # a tf.function wraps the Python function
    try:
        params = [p.name for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:count] if len(params) >= count else [f"input_{i}" for i in range(count)]


def import_callable(model, sample_inputs, name: str) -> ImportedModel:
    """Anything TF can trace (Keras model, tf.Module with __call__, tf.function, SavedModel signature)."""
    args, kwargs = split_samples(sample_inputs)
    names = positional_names(model, len(args))
    concrete = trace(lambda *a, **k: call_tf_model(model, a, k), args, kwargs, names, name)
    samples = dict(zip(names, args)) | kwargs
    return import_concrete(concrete, {tf_name(n): n for n in samples}, samples, "tensorflow", name)


def import_tensorflow(model, sample_inputs, name: str) -> ImportedModel:
    require("tensorflow", "TFModule")
    if hasattr(model, "node") and not callable(model):
        raise TypeError(f"{name!r}: a GraphDef needs its output names: wrap it in "
                        "TFGraphDefModule(name, graph_def, output_names)")
    if not callable(model):
        raise TypeError(f"TFModule {name!r}: expected a Keras model, a tf.Module with __call__ or a tf.function, "
                        f"got {type(model).__name__}")
    return import_callable(model, sample_inputs, name)


# ---- SavedModel directories -------------------------------------------------------------------
def load_saved_model(path):
    """A SavedModel's serving signature (keyword inputs, dict outputs), else its restored __call__."""
    tf = require("tensorflow", "loading a SavedModel")
    path = Path(path)
    if not (path / "saved_model.pb").is_file():
        raise MalformedModelFile(f"{path}: not a SavedModel directory (no saved_model.pb inside)")
    try:
        loaded = tf.saved_model.load(str(path))
    except Exception as exc:  # noqa: BLE001 - TF raises many types for bad protos
        raise MalformedModelFile(f"{path}: TensorFlow could not load this SavedModel ({exc})") from exc
    signature = getattr(loaded, "signatures", {}).get("serving_default")
    if signature is not None:
        def serve(**inputs):  # keeps `loaded` (which owns the variables) alive while traced
            return loaded.signatures["serving_default"](**inputs)

        return serve, list(signature.structured_input_signature[1])
    if callable(loaded):
        return loaded, None
    raise MalformedModelFile(f"{path}: the SavedModel has neither a 'serving_default' signature nor __call__")


def import_saved_model(path, sample_inputs, name: str) -> ImportedModel:
    fn, keywords = load_saved_model(path)
    if keywords is None:
        return import_callable(fn, sample_inputs, name)
    args, kwargs = split_samples(sample_inputs)
    samples = match_inputs(keywords, args, kwargs, name)  # signatures take keyword inputs only
    return import_callable(fn, samples, name)


# ---- GraphDefs ----------------------------------------------------------------------------------
def graph_def_inputs(graph_def) -> list[str]:
    return [node.name for node in graph_def.node if node.op == "Placeholder"]


def _graph_def_function(graph_def, output_names: list[str], values: dict, name: str):
    """The GraphDef as a TF function of its placeholders (graph order) with the shapes of `values`."""
    tf = require("tensorflow", "TFGraphDefModule")
    inputs = graph_def_inputs(graph_def)
    fetches = [o if ":" in o else f"{o}:0" for o in output_names]

    def run(*tensors):
        feeds = {f"{n}:0": t for n, t in zip(inputs, tensors)}
        outs = tf.compat.v1.import_graph_def(graph_def, input_map=feeds, return_elements=fetches, name="graph")
        return outs[0] if len(outs) == 1 else tuple(outs)

    tensors = [tf.convert_to_tensor(to_numpy(values[n])) for n in inputs]
    specs = [tf.TensorSpec(t.shape, t.dtype, name=tf_name(n)) for n, t in zip(inputs, tensors)]
    try:
        return tf.compat.v1.wrap_function(run, specs), tensors
    except (KeyError, ValueError) as exc:  # unknown output names, placeholders of another dtype
        raise ValueError(f"TFGraphDefModule {name!r}: cannot run the GraphDef for outputs {output_names} with "
                         f"inputs {inputs}: {exc}") from exc


def import_graph_def(graph_def, output_names: list[str], sample_inputs, name: str) -> ImportedModel:
    inputs = graph_def_inputs(graph_def)
    args, kwargs = split_samples(sample_inputs)
    values = match_inputs(inputs, args, kwargs, name)
    concrete, _ = _graph_def_function(graph_def, output_names, values, name)
    return import_concrete(concrete, {tf_name(n): n for n in inputs}, values, "tensorflow", name)


def run_graph_def(graph_def, output_names: list[str], args: tuple, kwargs: dict, name: str):
    """Run the GraphDef in TensorFlow (TFGraphDefModule.cpu_eval)."""
    values = match_inputs(graph_def_inputs(graph_def), tuple(args), kwargs, name)
    concrete, tensors = _graph_def_function(graph_def, output_names, values, name)
    return concrete(*tensors)
