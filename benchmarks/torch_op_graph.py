"""A shapes-only perf-model OpGraph from a torch model, via torch.export on the meta device.

Nothing is computed: the model is built and traced with meta tensors, so BERT-Large at sequence
384 costs seconds and no memory. Each ATen op maps to the PyBuda op(s) the device would run:
linear -> Matmul (+ Add for the bias), scaled_dot_product_attention -> Matmul, nn.Softmax,
Matmul; batch norm is folded into the conv before it (inference); views, transposes, dropout
and friends are free (edges).
"""

from __future__ import annotations

import torch

from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.perf import HostTransfer, OpGraph, PerfOp

# ATen op -> PyBuda op for one-to-one ops (inputs: the node's tensor arguments).
DIRECT = {
    "conv2d": "Conv2d", "relu": "Relu", "relu_": "Relu", "relu6": "Relu6", "hardtanh": "Relu6",
    "gelu": "Gelu", "silu": "Silu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp",
    "add": "Add", "add_": "Add", "sub": "Subtract", "mul": "Multiply", "div": "Divide",
    "softmax": "nn.Softmax", "_softmax": "nn.Softmax", "layer_norm": "nn.Layernorm",
    "matmul": "Matmul", "mm": "Matmul", "bmm": "Matmul",
    "max_pool2d": "MaxPool2d", "avg_pool2d": "AvgPool2d", "cat": "Concatenate", "mean": "ReduceAvg",
}
# Ops that only relabel or reorder data (or vanish at inference): their output is their first input.
EDGE = {"view", "reshape", "_unsafe_view", "transpose", "permute", "t", "flatten", "unsqueeze", "squeeze",
        "expand", "contiguous", "clone", "dropout", "alias", "detach", "slice", "select", "getitem",
        "batch_norm", "_native_batch_norm_legit_no_training"}


def _aten_name(target) -> str:
    name = getattr(target, "__name__", str(target))       # "linear.default", "getitem"
    return name.split(".")[0]


def _shape(node) -> tuple[int, ...]:
    value = node.meta.get("val")
    if isinstance(value, (tuple, list)):
        value = value[0]
    return tuple(int(d) for d in value.shape) if hasattr(value, "shape") else ()


def _produces_tensor(node) -> bool:
    value = node.meta.get("val")
    if isinstance(value, (tuple, list)):
        value = value[0] if value else None
    return hasattr(value, "shape")


def _tensor_args(node) -> list:
    found = []
    for arg in node.args:
        items = arg if isinstance(arg, (list, tuple)) else [arg]
        found += [a for a in items if isinstance(a, torch.fx.Node)]
    return found


class _Builder:
    def __init__(self, data_format: DataFormat, fidelity: MathFidelity):
        self.df, self.fidelity = data_format, fidelity
        self.ops: list[PerfOp] = []
        self.alias: dict[str, str] = {}
        self.weights: set[str] = set()
        self.shapes: dict[str, tuple] = {}

    def value(self, node) -> str:
        return self.alias.get(node.name, node.name)

    def emit(self, name, op_type, inputs, input_shapes, output_shape, output=None, **attrs) -> None:
        self.ops.append(PerfOp(name, op_type, tuple(input_shapes), tuple(output_shape), tuple(inputs),
                               output or name, attrs, self.df, self.fidelity))

    def add(self, node) -> None:
        aten = _aten_name(node.target)
        args = _tensor_args(node)
        names = [self.value(a) for a in args]
        shapes = [self.shapes[a.name] for a in args]        # as this op sees them (after any edge TM)
        out = _shape(node)
        self.shapes[node.name] = out
        if not any(n not in self.weights for n in names):   # constants, aranges, masks of weights
            self.weights.add(node.name)
        elif aten in EDGE:
            self.alias[node.name] = names[0]
        elif aten in ("linear", "addmm"):
            self._linear(node, aten, names, shapes, out)
        elif aten == "scaled_dot_product_attention":
            self._attention(node, names, shapes, out)
        elif aten in ("adaptive_avg_pool2d", "mean") and len(shapes[0]) == 4:   # global pool over H, W
            n, c, h, w = shapes[0]
            self.emit(node.name, "ReduceAvg", names[:1], [(n, h * w, c)], (n, 1, c))
        elif aten in ("max_pool2d", "avg_pool2d"):
            kernel = node.args[1]
            self.emit(node.name, DIRECT[aten], names[:1], shapes[:1], out, kernel_size=tuple(kernel))
        else:
            self.emit(node.name, DIRECT.get(aten, aten), names, shapes, out)

    def _linear(self, node, aten, names, shapes, out) -> None:
        if aten == "addmm":   # addmm(bias, a, b)
            names, shapes = [names[1], names[2], names[0]], [shapes[1], shapes[2], shapes[0]]
            b_shape = shapes[1]
        else:                 # linear(x, weight[out, in], bias)
            b_shape = shapes[1][::-1]
        has_bias = len(names) > 2
        mm = f"{node.name}_matmul" if has_bias else node.name
        self.emit(mm, "Matmul", names[:2], [shapes[0], b_shape], out)
        if has_bias:
            self.emit(node.name, "Add", [mm, names[2]], [out, shapes[2]], out)

    def _attention(self, node, names, shapes, out) -> None:
        q, k, v = names[:3]
        qs, ks = shapes[0], shapes[1]
        scores = qs[:-1] + (ks[-2],)
        self.emit(f"{node.name}_qk", "Matmul", [q, k], [qs, ks[:-2] + (ks[-1], ks[-2])], scores)
        self.emit(f"{node.name}_softmax", "nn.Softmax", [f"{node.name}_qk"], [scores], scores, dim=-1)
        self.emit(node.name, "Matmul", [f"{node.name}_softmax", v], [scores, shapes[2]], out)


def op_graph_from_torch(model: torch.nn.Module, input_shapes: list[tuple[int, ...]], name: str,
                        data_format: DataFormat = DataFormat.Bfp8_b,
                        fidelity: MathFidelity = MathFidelity.LoFi) -> OpGraph:
    """Trace `model` (built on the meta device, or moved there) at per-sample `input_shapes`."""
    model = model.to("meta").eval()
    inputs = tuple(torch.empty(s, device="meta") for s in input_shapes)
    program = torch.export.export(model, inputs)
    return op_graph_from_program(program, name, input_shapes[0][0], data_format, fidelity)


def op_graph_from_program(program, name: str, samples_per_run: int, data_format: DataFormat = DataFormat.Bfp8_b,
                          fidelity: MathFidelity = MathFidelity.LoFi, resident: tuple[str, ...] = ()) -> OpGraph:
    """The OpGraph of an exported program (traced on the meta device). User inputs named in `resident`
    stay in device DRAM between runs (a KV cache): no PCIe transfer is charged for them, nor for the
    last len(resident) outputs (what the device writes into them)."""
    signature = program.graph_signature
    user_inputs = set(signature.user_inputs)
    builder = _Builder(data_format, fidelity)
    transfers = []
    for node in program.graph.nodes:
        if node.op == "placeholder":
            builder.shapes[node.name] = _shape(node)
            if node.name in user_inputs and node.name not in resident:
                transfers.append(HostTransfer(node.name, "h2d", _shape(node), data_format))
            elif node.name not in user_inputs:
                builder.weights.add(node.name)
        elif node.op == "call_function" and _produces_tensor(node) and _shape(node):
            builder.add(node)
        elif node.op == "call_function":   # shape assertions, 0-d scalars: host bookkeeping, no device op
            builder.shapes[node.name] = _shape(node)
            builder.weights.add(node.name)
        elif node.op == "output":
            outputs = _tensor_args(node)
            for out in outputs[:len(outputs) - len(resident)]:
                transfers.append(HostTransfer(out.name, "d2h", _shape(out), data_format))
    return OpGraph(builder.ops, builder.weights, transfers, samples_per_run=samples_per_run, name=name)
