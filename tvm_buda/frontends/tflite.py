"""TFLite flatbuffer -> Relax through TVM's TFLite importer (also the last leg of the TF and JAX routes)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import MalformedModelFile, import_failed, require
from .imported import ImportedModel, TensorSpec, match_inputs, split_samples, to_numpy
from .relax_edit import drop_params_attr, rename_inputs

ROUTE = "TVM's TFLite importer (tvm.relax.frontend.tflite.from_tflite)"


@dataclass
class FlatbufferIO:
    """A TFLite model's graph inputs and outputs, as the file declares them."""

    input_tensors: list[str]            # tensor names, in subgraph order (= Relax main's parameters)
    input_names: list[str]              # what users call them (signature names when the file has one)
    shapes: list[tuple[int, ...]]       # shapes stored in the file (dynamic dims stored as 1)
    dynamic: list[tuple[int, ...]]      # indices of dims the file marks unknown (-1)
    dtypes: list[str]
    output_tensors: list[str]


def read_tflite_file(path) -> bytes:
    path = Path(path)
    if not path.is_file():
        raise MalformedModelFile(f"{path}: no such TFLite file")
    buf = path.read_bytes()
    if len(buf) < 8 or buf[4:8] != b"TFL3":
        raise MalformedModelFile(
            f"{path}: not a TFLite flatbuffer (expected the identifier 'TFL3' at bytes 4-8, found {buf[4:8]!r})")
    return buf


def parse_flatbuffer(buf: bytes, source: str):
    """The tflite package's Model object for `buf`, or a MalformedModelFile naming `source`."""
    tflite = require("tflite", "the TFLite route")
    try:
        model = tflite.Model.GetRootAsModel(buf, 0)
        if model.SubgraphsLength() < 1:
            raise ValueError("it has no subgraph")
        model.Subgraphs(0).InputsAsNumpy()
    except Exception as exc:  # noqa: BLE001 - flatbuffers raises anything on corrupt data
        raise MalformedModelFile(f"{source}: corrupt TFLite flatbuffer ({exc})") from exc
    return model


def flatbuffer_io(model) -> FlatbufferIO:
    from tflite.TensorType import TensorType

    type_names = {value: key.lower() for key, value in vars(TensorType).items() if not key.startswith("_")}
    graph = model.Subgraphs(0)
    tensors = [graph.Tensors(int(i)) for i in graph.InputsAsNumpy()]
    names = [t.Name().decode() for t in tensors]
    shapes = [tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else () for t in tensors]
    dynamic = [tuple(i for i, d in enumerate(t.ShapeSignatureAsNumpy()) if d < 0) if t.ShapeSignatureLength() else ()
               for t in tensors]
    outputs = [graph.Tensors(int(i)).Name().decode() for i in graph.OutputsAsNumpy()]
    return FlatbufferIO(names, _signature_names(model, graph) or names, shapes, dynamic,
                        [type_names.get(t.Type(), "float32") for t in tensors], outputs)


def _signature_names(model, graph) -> list[str] | None:
    """Input names from the file's only signature (what tf.lite's signature runner calls them)."""
    if model.SignatureDefsLength() != 1:
        return None
    signature = model.SignatureDefs(0)
    by_index = {signature.Inputs(i).TensorIndex(): signature.Inputs(i).Name().decode()
                for i in range(signature.InputsLength())}
    names = [by_index.get(int(i)) for i in graph.InputsAsNumpy()]
    return names if all(names) and len(set(names)) == len(names) else None


def flatbuffer_to_relax(model, io: FlatbufferIO, shapes: list[tuple], framework: str, name: str, route: str,
                        known_shapes: dict[int, tuple] | None = None):
    """Import with input shapes fixed; returns the module with inputs named as users call them."""
    require("tflite", "the TFLite route")
    from tvm.relax.frontend.tflite import from_tflite

    from .tflite_ops import operator_converter

    shape_dict = dict(zip(io.input_tensors, shapes))
    dtype_dict = dict(zip(io.input_tensors, io.dtypes))
    try:
        mod = from_tflite(model, shape_dict, dtype_dict, op_converter=operator_converter(known_shapes))
    except Exception as exc:  # noqa: BLE001 - re-raised with the framework and route named
        raise import_failed(framework, name, route, exc) from exc
    return rename_inputs(drop_params_attr(mod), io.input_names)


def input_shapes(io: FlatbufferIO, samples: tuple, model: str) -> list[tuple]:
    """Shapes to compile for: the sample inputs' when given, else the file's."""
    args, kwargs = split_samples(samples)
    if not args and not kwargs:
        return list(io.shapes)
    values = match_inputs(io.input_names, args, kwargs, model)
    shapes = []
    for name, stored, dynamic in zip(io.input_names, io.shapes, io.dynamic):
        shape = tuple(to_numpy(values[name]).shape)
        fixed = [i for i in range(len(stored)) if i not in dynamic]
        if len(shape) != len(stored) or any(shape[i] != stored[i] for i in fixed):
            raise ValueError(f"{model}: sample input '{name}' has shape {shape}, but the model expects {stored} "
                             f"(dims {list(dynamic)} may vary)")
        shapes.append(shape)
    return shapes


def import_tflite(path, sample_inputs: tuple, name: str) -> ImportedModel:
    """A .tflite file: numpy in, numpy out; outputs in the file's order."""
    buf = read_tflite_file(path)
    model = parse_flatbuffer(buf, str(path))
    io = flatbuffer_io(model)
    shapes = input_shapes(io, sample_inputs, name)
    known = tensor_shapes(buf, shapes, io.dtypes) if any(io.dynamic) else None
    mod = flatbuffer_to_relax(model, io, shapes, "tflite", name, ROUTE, known)
    specs = [TensorSpec(n, s, d) for n, s, d in zip(io.input_names, shapes, io.dtypes)]
    structure = "single" if len(io.output_tensors) == 1 else "tuple"
    return ImportedModel(name, "tflite", mod, {}, specs, structure, io.output_tensors)


def _reference_kernels(tf):
    """The reference kernels, without the XNNPACK delegate (which prints an INFO line on stderr)."""
    return tf.lite.experimental.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES


def tensor_shapes(buf: bytes, shapes: list[tuple], dtypes: list[str]) -> dict[int, tuple] | None:
    """Every tensor's shape for these input shapes, by running the TFLite interpreter once on zeros.

    Files with a dynamic batch compute some shapes at run time; TVM needs them static. Without
    TensorFlow installed this returns None and shape signatures are used instead.
    """
    try:
        tf = require("tensorflow", "the TFLite interpreter")
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tf.lite.Interpreter announces its own deprecation
        interpreter = tf.lite.Interpreter(model_content=buf, experimental_preserve_all_tensors=True,
                                          experimental_op_resolver_type=_reference_kernels(tf))
    inputs = interpreter.get_input_details()
    for detail, shape in zip(inputs, shapes):
        interpreter.resize_tensor_input(detail["index"], shape)
    interpreter.allocate_tensors()
    for detail, shape, dtype in zip(inputs, shapes, dtypes):
        interpreter.set_tensor(detail["index"], np.zeros(shape, dtype=dtype))
    interpreter.invoke()
    return {d["index"]: tuple(int(x) for x in d["shape"]) for d in interpreter.get_tensor_details()}


def run_tflite_file(path, args: tuple, kwargs: dict | None = None, name: str = "model") -> list[np.ndarray]:
    """The TFLite interpreter's own answer for a .tflite file (TFLiteModule.cpu_eval)."""
    buf = read_tflite_file(path)
    io = flatbuffer_io(parse_flatbuffer(buf, str(path)))
    values = match_inputs(io.input_names, tuple(args), kwargs or {}, name)
    return run_tflite_interpreter(buf, [to_numpy(values[n]) for n in io.input_names])


def run_tflite_interpreter(buf: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run a flatbuffer with tf.lite.Interpreter; inputs and outputs in subgraph order."""
    tf = require("tensorflow", "running a TFLite model on the CPU (tf.lite.Interpreter)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tf.lite.Interpreter announces its own deprecation
        interpreter = tf.lite.Interpreter(model_content=buf, experimental_op_resolver_type=_reference_kernels(tf))
    details = interpreter.get_input_details()
    for detail, value in zip(details, inputs):
        if tuple(detail["shape"]) != tuple(np.shape(value)):
            interpreter.resize_tensor_input(detail["index"], np.shape(value))
    interpreter.allocate_tensors()
    for detail, value in zip(details, inputs):
        interpreter.set_tensor(detail["index"], np.asarray(value, dtype=detail["dtype"]))
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]
