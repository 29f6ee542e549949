"""A traced TensorFlow function -> TFLite flatbuffer -> Relax (shared by the TensorFlow and JAX routes).

TVM 0.27 has no TensorFlow frontend, so TF graphs go through TFLite. Shapes are fixed from the
sample inputs before conversion: a dynamic batch breaks TVM's TFLite reshape conversion.
"""

from __future__ import annotations

import contextlib
import logging
import re

import numpy as np

from .errors import FRAMEWORK_NAMES, ModelImportError, import_failed, require
from .imported import ImportedModel, TensorSpec, to_numpy
from .relax_edit import num_outputs, reorder_outputs
from .tflite import flatbuffer_io, flatbuffer_to_relax, parse_flatbuffer

CONVERTER = "tf.lite.TFLiteConverter"
ROUTE = f"{CONVERTER} (TF graph -> TFLite) then TVM's TFLite importer"


def tf_name(name: str) -> str:
    """A valid TF op name for an input placeholder (TFLite keeps it as the tensor name)."""
    name = re.sub(r"[^A-Za-z0-9_.]", "_", str(name))
    return name if re.match(r"[A-Za-z0-9.]", name) else f"input{name}"


def trace(fn, args: tuple, kwargs: dict, names: list[str], model: str):
    """Concrete function of `fn` for inputs shaped like the samples; placeholders named `names` then the keys."""
    tf = require("tensorflow", "the TensorFlow route")
    arg_specs = [_spec(tf, value, name, model) for value, name in zip(args, names)]
    kw_specs = {key: _spec(tf, value, key, model) for key, value in kwargs.items()}
    return tf.function(fn, autograph=False).get_concrete_function(*arg_specs, **kw_specs)


def _spec(tf, value, name: str, model: str):
    array = to_numpy(value)
    if array.dtype == np.float64:  # TVM's TFLite importer has no float64 tensors
        raise TypeError(f"{model}: input '{name}' is float64, but the TFLite route compiles float32 models; pass float32 "
                        "sample inputs (e.g. x.astype(np.float32))")
    return tf.TensorSpec(array.shape, tf.as_dtype(array.dtype), name=tf_name(name))


def to_tflite(concrete, framework: str, name: str) -> bytes:
    """Freeze variables into constants and convert to float32 TFLite builtins."""
    tf = require("tensorflow", "the TensorFlow route")
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    try:
        frozen = convert_variables_to_constants_v2(concrete)
        with _quiet_absl():  # "consider providing the trackable_obj": frozen graphs have no variables to track
            converter = tf.lite.TFLiteConverter.from_concrete_functions([frozen])
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        return converter.convert()
    except Exception as exc:  # noqa: BLE001 - re-raised with the framework and route named
        raise import_failed(framework, name, CONVERTER + " (TF graph -> TFLite)", exc) from exc


@contextlib.contextmanager
def _quiet_absl():
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def output_layout(structured) -> tuple[str, list[str], list]:
    """(structure, names, flat tensors) of a concrete function's structured outputs."""
    if isinstance(structured, dict):
        return "dict", [str(k) for k in structured], list(structured.values())
    if isinstance(structured, (tuple, list)):
        flat = _flatten(structured)
        return "tuple", [f"output_{i}" for i in range(len(flat))], flat
    return "single", ["output_0"], [structured]


def _flatten(value) -> list:
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flatten(v)]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v)]
    return [value]


def import_concrete(concrete, user_names: dict[str, str], samples: dict[str, object],
                    framework: str, name: str) -> ImportedModel:
    """Convert a traced function whose placeholders are named tf_name(user name).

    user_names: placeholder name -> the name users pass inputs by; samples: user name -> value.
    """
    where = f"{FRAMEWORK_NAMES[framework]} model '{name}'"
    buf = to_tflite(concrete, framework, name)
    model = parse_flatbuffer(buf, f"the TFLite conversion of {where}")
    io = flatbuffer_io(model)
    io.input_names = [user_names.get(t.split(":")[0], t) for t in io.input_tensors]
    missing = [n for n in io.input_names if n not in samples]
    if missing:
        raise ModelImportError(f"{where}: {CONVERTER} renamed inputs {missing}; expected {sorted(samples)}")
    specs = [TensorSpec.of(n, samples[n]) for n in io.input_names]
    mod = flatbuffer_to_relax(model, io, [s.shape for s in specs], framework, name, ROUTE)
    structure, out_names, tensors = output_layout(concrete.structured_outputs)
    if len(tensors) > 1:
        mod = reorder_outputs(mod, _output_order(tensors, io.output_tensors, where))
    if num_outputs(mod) != len(tensors):
        raise ModelImportError(f"{where}: expected {len(tensors)} outputs after conversion, got {num_outputs(mod)}")
    return ImportedModel(name, framework, mod, {}, specs, structure, out_names)


def _output_order(tensors: list, tflite_outputs: list[str], where: str) -> list[int]:
    """Position in the TFLite outputs of each structured output (TFLite keeps the TF tensor names)."""
    position = {out.split(":")[0]: i for i, out in enumerate(tflite_outputs)}
    wanted = [t.name.split(":")[0] for t in tensors]
    if not all(w in position for w in wanted):
        raise ModelImportError(f"{where}: cannot match outputs {wanted} to the TFLite outputs {tflite_outputs}")
    return [position[w] for w in wanted]
