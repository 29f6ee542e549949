"""ONNX -> Relax through TVM's ONNX importer, with weights kept as named parameters."""

from __future__ import annotations

from pathlib import Path

from .errors import MalformedModelFile, import_failed, require
from .imported import ImportedModel, TensorSpec, match_inputs, split_samples, to_numpy
from .relax_edit import num_outputs

ROUTE = "TVM's ONNX importer (tvm.relax.frontend.onnx.from_onnx)"


def load_onnx(path):
    """Read an .onnx file (external data too), or say why it is not a usable model."""
    onnx = require("onnx", "OnnxModule")
    path = Path(path)
    if not path.is_file():
        raise MalformedModelFile(f"{path}: no such ONNX file")
    try:
        model = onnx.load(str(path))
    except Exception as exc:  # noqa: BLE001 - protobuf raises DecodeError, RuntimeWarning, ...
        raise MalformedModelFile(f"{path}: not a valid ONNX protobuf ({type(exc).__name__}: {exc})") from exc
    if not model.graph.output:
        raise MalformedModelFile(f"{path}: parsed as ONNX but its graph has no outputs (truncated, or not ONNX?)")
    return model


def graph_inputs(model) -> list[tuple[str, tuple, str]]:
    """(name, declared shape with None for unknown dims, numpy dtype) of each runtime input."""
    from onnx.helper import tensor_dtype_to_np_dtype

    initializers = {t.name for t in model.graph.initializer}
    out = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
                     for d in tensor_type.shape.dim)
        out.append((value.name, dims, str(tensor_dtype_to_np_dtype(tensor_type.elem_type))))
    return out


def without_initializer_inputs(model):
    """The model with initializers no longer repeated as graph inputs (a copy; the model itself if none are).

    Older exporters and the ONNX model zoo list every weight among the graph inputs too (ONNX IR < 4
    required it). TVM's importer then makes two parameters of one name, and Relax refuses the
    module ("Variable <name> was used before its definition"). A weight listed as an input is only a
    default that callers may override; we keep it a weight."""
    initializers = {t.name for t in model.graph.initializer}
    if not any(value.name in initializers for value in model.graph.input):
        return model
    stripped = type(model)()
    stripped.CopyFrom(model)
    runtime = [value for value in model.graph.input if value.name not in initializers]
    del stripped.graph.input[:]
    stripped.graph.input.extend(runtime)
    return stripped


def fixed_shapes(declared: list[tuple[str, tuple, str]], sample_inputs, name: str) -> list[tuple[int, ...]]:
    """Shapes to compile for: from the samples (checked against known dims), else the declared ones."""
    args, kwargs = split_samples(sample_inputs)
    values = match_inputs([n for n, _, _ in declared], args, kwargs, name) if (args or kwargs) else {}
    shapes = []
    for input_name, dims, _ in declared:
        if input_name not in values:
            if None in dims:
                raise ValueError(f"{name}: ONNX input '{input_name}' has unknown dims {dims}; pass a sample input "
                                 "to fix them")
            shapes.append(dims)
            continue
        shape = tuple(to_numpy(values[input_name]).shape)
        if len(shape) != len(dims) or any(d is not None and d != s for d, s in zip(dims, shape)):
            raise ValueError(f"{name}: sample input '{input_name}' has shape {shape}, but the ONNX graph declares "
                             f"{tuple('?' if d is None else d for d in dims)}")
        shapes.append(shape)
    return shapes


def import_onnx(model, sample_inputs, name: str) -> ImportedModel:
    """An onnx.ModelProto or a path to one: numpy in, numpy out."""
    require("onnx", "OnnxModule")
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    if isinstance(model, (str, Path)):
        model = load_onnx(model)
    model = without_initializer_inputs(model)
    declared = graph_inputs(model)
    shapes = fixed_shapes(declared, sample_inputs, name)
    shape_dict = {n: list(s) for (n, _, _), s in zip(declared, shapes)}
    dtype_dict = {n: d for n, _, d in declared}
    try:
        mod = from_onnx(model, shape_dict, dtype_dict, keep_params_in_input=True)
    except Exception as exc:  # noqa: BLE001 - re-raised with the framework and route named
        # Some converters need an initializer as a constant (SequenceInsert's position, ...):
        # import again with every weight embedded as a constant before giving up.
        try:
            mod = from_onnx(model, shape_dict, dtype_dict, keep_params_in_input=False)
        except Exception:  # noqa: BLE001 - the first error says more
            raise import_failed("onnx", name, ROUTE, exc) from exc
    mod, detached = relax.frontend.detach_params(mod)
    weight_vars = mod["main"].params[len(declared):]
    params = {v.name: t.numpy() for v, t in zip(weight_vars, detached.get("main", []))}
    specs = [TensorSpec(n, tuple(s), d) for (n, _, d), s in zip(declared, shapes)]
    outputs = [o.name for o in model.graph.output]
    structure = "single" if num_outputs(mod) == 1 and len(outputs) == 1 else "tuple"
    return ImportedModel(name, "onnx", mod, params, specs, structure, outputs)


def run_onnxruntime(model, args: tuple, kwargs: dict | None = None, name: str = "model") -> list:
    """onnxruntime's own answer (OnnxModule.cpu_eval and the golden in tests)."""
    ort = require("onnxruntime", "running an ONNX model on the CPU (OnnxModule.cpu_eval)")
    source = str(model) if isinstance(model, (str, Path)) else model.SerializeToString()
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    values = match_inputs(names, tuple(args), kwargs or {}, name)
    return session.run(None, {n: to_numpy(values[n]) for n in names})
