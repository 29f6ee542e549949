"""Graphs as the web report draws them: nodes (inputs, parameters, constants, ops) and edges.

Two sources: a Relax function (the model after import, after each pass, after partitioning) and
a generated device module (codegen's ModuleGraph). Every node carries the metadata its dialog
shows; `kind` picks its look (inputs and parameters as ovals in two blues, ops as boxes).
"""

from __future__ import annotations

import tvm
from tvm import relax

from codegen.lower import static_shape, tensor_constant

from ..op_table import OPS_BY_RELAX_NAME, call_op_name

WEIGHT_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta", "_kernel")


def _node(node_id: str, kind: str, label: str, **meta) -> dict:
    return {"id": node_id, "kind": kind, "label": label, "meta": {k: v for k, v in meta.items() if v not in (None, "")}}


def _shape_text(expr) -> str:
    shape = static_shape(expr)
    ty = getattr(expr, "ty", None)
    dtype = getattr(ty, "dtype", "")
    return f"[{', '.join(map(str, shape))}] {dtype}".strip() if shape or dtype else ""


def _attrs(call: relax.Call) -> dict:
    attrs = call.attrs
    if attrs is None or not hasattr(attrs, "keys"):
        return {}
    return {str(k): str(attrs[k]) for k in attrs.keys()}


def _layer(param_name: str) -> str:
    for suffix in WEIGHT_SUFFIXES:
        if param_name.endswith(suffix):
            return param_name[: -len(suffix)]
    return param_name


def relax_graph(func: relax.Function, num_inputs: int | None, placement: dict | None = None) -> dict:
    """Nodes and edges of one Relax function. `placement`: GlobalVar name -> "device" for calls to
    device functions (after partitioning); other calls are then "host"."""
    nodes, edges, ids = [], [], {}
    params = list(func.params)
    num_inputs = len(params) if num_inputs is None else num_inputs
    for i, p in enumerate(params):
        kind = "input" if i < num_inputs else "parameter"
        ids[p] = f"p{i}"
        nodes.append(_node(ids[p], kind, f"{p.name}\n{_shape_text(p)}", name=p.name, shape=_shape_text(p),
                           role=kind, layer=_layer(p.name) if kind == "parameter" else None))
    weight_params = set(params[num_inputs:])
    constants = 0

    def source(expr, target: str) -> None:
        nonlocal constants
        if isinstance(expr, relax.Var) and expr in ids:
            edges.append({"source": ids[expr], "target": target})
        elif isinstance(expr, relax.Tuple):
            for field in expr.fields:
                source(field, target)
        elif isinstance(expr, relax.TupleGetItem):
            source(expr.tuple_value, target)
        elif tensor_constant(expr) is not None:
            constants += 1
            cid = f"c{constants}"
            nodes.append(_node(cid, "constant", f"const\n{_shape_text(expr)}", shape=_shape_text(expr), role="constant"))
            edges.append({"source": cid, "target": target})

    index = 0
    for block in func.body.blocks:
        for binding in block.bindings:
            value, var = binding.value, binding.var
            if not isinstance(value, relax.Call):  # an alias (tuple item, re-binding): edges skip it
                refs = []
                _collect(value, ids, refs)
                if len(refs) == 1:
                    ids[var] = refs[0]
                continue
            index += 1
            node_id = f"n{index}"
            op_name, meta = _call_meta(value, placement)
            weight_layers = [_layer(a.name) for a in value.args if a in weight_params]
            label = "\n".join(filter(None, [f"{var.name}: {op_name}", _attr_line(meta.get("attrs")),
                                            _shape_text(var)]))
            nodes.append(_node(node_id, "op", label, name=var.name, shape=_shape_text(var),
                               layer=weight_layers[0] if weight_layers else None, **meta))
            for arg in value.args:
                source(arg, node_id)
            ids[var] = node_id
    out_id = "out"
    nodes.append(_node(out_id, "output", "output", role="output"))
    source(func.body.body, out_id)
    return {"nodes": nodes, "edges": edges}


def _collect(expr, ids: dict, refs: list) -> None:
    if isinstance(expr, relax.Var) and ids.get(expr):
        refs.append(ids[expr])
    elif isinstance(expr, relax.Tuple):
        for field in expr.fields:
            _collect(field, ids, refs)
    elif isinstance(expr, relax.TupleGetItem):
        _collect(expr.tuple_value, ids, refs)


def _attr_line(attrs: dict | None) -> str:
    if not attrs:
        return ""
    text = ", ".join(f"{k}={v}" for k, v in attrs.items())
    return text if len(text) <= 60 else text[:57] + "..."


def _call_meta(call: relax.Call, placement: dict | None) -> tuple[str, dict]:
    if isinstance(call.op, tvm.ir.Op):
        key = call_op_name(call)
        name, entry = key.removeprefix("relax."), OPS_BY_RELAX_NAME.get(key)
        where = "host" if placement is not None else None
        return name, {"relax_op": name, "pybuda_op": entry.pybuda_op if entry else None, "attrs": _attrs(call),
                      "placement": where}
    if isinstance(call.op, tvm.ir.GlobalVar):
        name = call.op.name_hint
        device = placement is not None and name in placement
        return name, {"relax_op": f"call {name}", "placement": "device" if device else ("host" if placement else None),
                      "device_module": placement.get(name) if device else None}
    return "call", {"relax_op": "call"}


def module_graph(graph, numerics, perf_rows: dict) -> dict:
    """Nodes and edges of a generated device module (codegen.ModuleGraph).

    numerics: the model's NumericsConfig (format and fidelity per op); perf_rows: op name -> perf
    report row (dict) for estimated cycles and grid."""
    nodes, edges, producer = [], [], {}
    for name in graph.inputs:
        producer[name] = f"in:{name}"
        nodes.append(_node(f"in:{name}", "input", name, name=name, role="input"))
    for name, value in graph.parameters.items():
        producer[f"self.{name}"] = f"w:{name}"
        shape = f"[{', '.join(map(str, value.shape))}]"
        nodes.append(_node(f"w:{name}", "parameter", f"{name}\n{shape}", name=name, shape=shape, role="parameter",
                           layer=_layer(name)))
    for name, value in graph.constants.items():
        producer[f'self.get_constant("{name}")'] = f"k:{name}"
        shape = f"[{', '.join(map(str, value.shape))}]"
        nodes.append(_node(f"k:{name}", "constant", f"{name}\n{shape}", name=name, shape=shape, role="constant"))
    for line in graph.ops:
        resolved = numerics.resolve(line.op, line.name)
        row = perf_rows.get(line.name, {})
        shape = f"[{', '.join(map(str, line.output_shape))}]"
        attrs = {k: str(v) for k, v in line.attrs.items()}
        label = "\n".join(filter(None, [f"{line.name}: {line.op}", _attr_line(attrs), shape]))
        nodes.append(_node(f"op:{line.name}", "op", label, name=line.name, pybuda_op=line.op, relax_op=line.source_op,
                           attrs=attrs, shape=shape, data_format=resolved.output_df.name,
                           math_fidelity=resolved.math_fidelity.name, placement="device",
                           estimated_cycles=round(row["cycles"]) if row.get("cycles") else None,
                           grid="x".join(map(str, row["grid"])) if row.get("grid") else None,
                           epoch=row.get("epoch"), layer=_first_layer(line, graph)))
        for inp in line.inputs:
            if inp in producer:
                edges.append({"source": producer[inp], "target": f"op:{line.name}"})
        producer[line.output] = f"op:{line.name}"
    for i, out in enumerate(graph.outputs):
        nodes.append(_node(f"out:{i}", "output", f"output {i}", role="output"))
        if out in producer:
            edges.append({"source": producer[out], "target": f"out:{i}"})
    return {"nodes": nodes, "edges": edges}


def _first_layer(line, graph) -> str | None:
    for inp in line.inputs:
        if inp.startswith("self.") and inp.removeprefix("self.") in graph.parameters:
            return _layer(inp.removeprefix("self."))
    return None


def op_edges(graph) -> list[tuple[str, str]]:
    """(producer op, consumer op) pairs inside a device module, for the placement view."""
    producer, out = {}, []
    for line in graph.ops:
        out += [(producer[i], line.name) for i in line.inputs if i in producer]
        producer[line.output] = line.name
    return out
