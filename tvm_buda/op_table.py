"""The device op table: the single source of truth for what runs on the simulated device.

Each entry names the Relax op, the PyBuda op it becomes, how the call's arguments and attributes
convert, and when the device can take it. Partition patterns (`tvm_buda.partition`) and the
code generator (`codegen`) are both derived from this table; kernels are keyed by `pybuda_op`.
Adding an op: one entry here, one kernel in buda_runtime_sim/kernels, one test.

Data types: the device computes in float. Float tensors cross the boundary as they are and bool
tensors as exact 0.0/1.0 (comparisons, where, logic), so both may enter and leave a device
subgraph; integer tensors stay on the host, except the exact int indices Argmax produces.

Fused patterns (matmul + bias, conv + bias) that become one PyBuda op live beside it, in
`tvm_buda.op_composites`. Backward ops without a Relax op of their own (LayernormBw, ...) are
`call_pure_packed` calls of our global functions (`tvm_buda.grad_ops`), keyed here by the
function's name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from tvm import ir, relax, tirx
from tvm.relax.dpl import ExternFuncPattern, is_op, wildcard

from relay_passes.scalars import static_shape

from . import grad_ops

FLOAT_DTYPES = frozenset({"float32", "float16", "bfloat16"})
DEVICE_DTYPES = FLOAT_DTYPES | {"bool"}
CAST_DTYPES = FLOAT_DTYPES | {"bool"}
_FLOAT32_MAX = float(np.finfo(np.float32).max)  # stands in for +-inf in generated code


@dataclass(frozen=True)
class Lowered:
    """One PyBuda op call: `pybuda.op.<op>(name, *inputs, **attrs)`."""

    op: str
    inputs: list
    attrs: dict = field(default_factory=dict)


def _always(call: relax.Call) -> bool:
    return True


@dataclass(frozen=True)
class OpEntry:
    relax_op: str                             # e.g. "relax.nn.softmax"
    pybuda_op: str                            # e.g. "nn.Softmax" (attribute path under pybuda.op)
    num_args: int                             # arguments of the Relax call (tensors, tuples, attribute values)
    convert: Callable[[relax.Call], Lowered]  # Relax call -> PyBuda op call
    check: Callable[[relax.Call], bool] = _always  # extra constraint beyond the dtype rule
    fallback_aliases: tuple[str, ...] = ()    # PyBuda/Relay names users may use in cpu_fallback_ops
    int_result: bool = False                  # produces exact integers (indices) the host may receive

    @property
    def name(self) -> str:
        """Short name, used for patterns ("buda.<name>") and reports."""
        return self.relax_op.removeprefix("relax.").removeprefix(grad_ops.PREFIX)

    def pattern(self):
        """The call this entry matches: the Relax op, or call_pure_packed of our global function."""
        args = [wildcard() for _ in range(self.num_args)]
        if self.relax_op.startswith(grad_ops.PREFIX):
            return is_op("relax.call_pure_packed")(ExternFuncPattern(self.relax_op), *args)
        return is_op(self.relax_op)(*args)


def call_op_name(call: relax.Call) -> str | None:
    """The op table's key for a call: its Relax op's name, or the global function a
    call_pure_packed calls; None for calls of functions."""
    if not isinstance(call.op, ir.Op):
        return None
    return grad_ops.packed_name(call) or call.op.name


# ---- reading calls ------------------------------------------------------------------------
def _ints(values) -> list[int]:
    return [int(v) for v in values]


def _dtype(expr) -> str | None:
    ty = getattr(expr, "ty", None)
    return str(ty.dtype) if isinstance(ty, relax.TensorType) else None


def _ndim(expr) -> int:
    return int(expr.ty.ndim)


def _shape(expr) -> list[int] | None:
    """The static shape of a tensor expression, or None."""
    return static_shape(expr)


def _tensor_args(call: relax.Call) -> list:
    """Tensor arguments in order, with inline tuples (concat) flattened."""
    out = []
    for arg in call.args:
        if isinstance(arg, relax.Tuple):
            out.extend(arg.fields)
        elif isinstance(getattr(arg, "ty", None), relax.TensorType):   # not immediates, not a packed call's function
            out.append(arg)
    return out


def _scalar(expr) -> float | None:
    """A literal bound (IntImm, FloatImm or a PrimValue of one) as a float, None if not a literal.
    +-inf become +-FLT_MAX: generated code is Python source, where inf is not a literal."""
    while hasattr(expr, "value") and not isinstance(expr, (int, float)):
        expr = expr.value
    if not isinstance(expr, (int, float)):
        return None
    value = float(expr)
    return math.copysign(_FLOAT32_MAX, value) if math.isinf(value) else value


def _static_shape(call: relax.Call) -> bool:
    return _shape(call) is not None


# ---- conversions ----------------------------------------------------------------------------
def _same(op: str, attrs: Callable[[relax.Call], dict] = lambda call: {}):
    """Convert a call whose tensor arguments map one to one."""
    return lambda call: Lowered(op, _tensor_args(call), attrs(call))


def _permute(call: relax.Call) -> Lowered:
    ndim = _ndim(call.args[0])
    axes = _ints(call.attrs.axes) if call.attrs.axes is not None else list(reversed(range(ndim)))
    moved = [i for i, a in enumerate(axes) if a != i]
    if len(moved) == 2:  # a single swap is PyBuda's Transpose
        return Lowered("Transpose", [call.args[0]], {"dim0": moved[0], "dim1": moved[1]})
    return Lowered("Permute", [call.args[0]], {"axes": axes})


def _reshape(call: relax.Call) -> Lowered:
    return Lowered("Reshape", [call.args[0]], {"shape": _shape(call)})


def _squeeze(call: relax.Call) -> Lowered:
    axes = call.attrs.axis
    if axes is not None and len(axes) == 1:
        return Lowered("Squeeze", [call.args[0]], {"dim": int(axes[0])})
    return _reshape(call)


def _expand_dims(call: relax.Call) -> Lowered:
    axes = call.attrs.axis
    if len(axes) == 1:
        return Lowered("Unsqueeze", [call.args[0]], {"dim": int(axes[0])})
    return _reshape(call)


def _single_axis(call: relax.Call) -> bool:
    return call.attrs.axis is not None and len(call.attrs.axis) == 1


def _reduce(op: str):
    return _same(op, lambda call: {"dim": int(call.attrs.axis[0]), "keep_dim": bool(call.attrs.keepdims)})


def _argmax(call: relax.Call) -> Lowered:
    dim = None if call.attrs.axis is None else int(call.attrs.axis)
    return Lowered("Argmax", [call.args[0]], {"dim": dim, "keep_dim": bool(call.attrs.keepdims)})


def _layer_norm(call: relax.Call) -> Lowered:
    return Lowered("nn.Layernorm", list(call.args[:3]),
                   {"dim": int(call.attrs.axes[0]), "epsilon": float(call.attrs.epsilon)})


def _layer_norm_supported(call: relax.Call) -> bool:
    return len(call.attrs.axes) == 1 and bool(call.attrs.center) and bool(call.attrs.scale)


def _layernorm_bw(call: relax.Call) -> Lowered:
    return Lowered("nn.LayernormBw", _tensor_args(call), {"dim": int(grad_ops.attribute(call, 3)),
                   "epsilon": float(grad_ops.attribute(call, 4)), "operand": int(grad_ops.attribute(call, 5))})


def _strided_slice(call: relax.Call) -> Lowered:
    axes, begin, end, strides = _slice_parts(call)
    return Lowered("Index", [call.args[0]], {"dim": int(axes[0]), "start": int(begin[0].value),
                                             "stop": int(end[0].value), "stride": int(strides[0].value)})


def _slice_parts(call: relax.Call) -> list:
    """axes, begin, end, strides (strides may be omitted from the call: ones). The pattern needs
    all five arguments; relay_passes.SplitMultiAxisOps writes them out."""
    parts = list(call.args[1:])
    if len(parts) == 3:
        parts.append(relax.Tuple([tirx.IntImm("int64", 1)] * len(parts[0].fields)))
    return parts


def _strided_slice_supported(call: relax.Call) -> bool:
    parts = _slice_parts(call)
    if not all(isinstance(p, relax.Tuple) and len(p.fields) == 1 for p in parts):
        return False
    return all(isinstance(p[0], tirx.IntImm) for p in parts) and int(parts[3][0].value) > 0


def _window_padding(padding) -> tuple[int, ...]:
    """Relax (top, left, bottom, right) -> PyBuda (left, right, top, bottom)."""
    top, left, bottom, right = _ints(padding)
    return (left, right, top, bottom)


def _conv(op: str):
    def convert(call: relax.Call) -> Lowered:
        a = call.attrs
        attrs = {"stride": tuple(_ints(a.strides)), "padding": _window_padding(a.padding),
                 "dilation": tuple(_ints(a.dilation)), "groups": int(a.groups),
                 "channel_last": a.data_layout == "NHWC"}
        if op == "Conv2dTranspose":
            attrs["output_padding"] = tuple(_ints(a.output_padding))
        return Lowered(op, list(call.args[:2]), attrs)

    return convert


def _conv_layouts(kernel_layout: str):
    def check(call: relax.Call) -> bool:
        a = call.attrs
        return a.data_layout in ("NCHW", "NHWC") and a.out_layout == a.data_layout and a.kernel_layout == kernel_layout

    return check


def _pool(op: str):
    def convert(call: relax.Call) -> Lowered:
        a = call.attrs
        attrs = {"kernel_size": tuple(_ints(a.pool_size)), "stride": tuple(_ints(a.strides)),
                 "padding": _window_padding(a.padding), "ceil_mode": bool(a.ceil_mode),
                 "channel_last": a.layout == "NHWC"}
        if op == "MaxPool2d":
            attrs["dilation"] = tuple(_ints(a.dilation))
        else:
            attrs["count_include_pad"] = bool(a.count_include_pad)
        return Lowered(op, [call.args[0]], attrs)

    return convert


def _pool_supported(call: relax.Call) -> bool:
    a = call.attrs
    layouts_ok = a.layout in ("NCHW", "NHWC") and a.out_layout == a.layout
    return layouts_ok and (call.op.name == "relax.nn.max_pool2d" or _ints(a.dilation) == [1, 1])


def _pad_layout(call: relax.Call) -> bool | None:
    """Whether a pad touches the last two dims (False), H and W of NHWC (True, channel_last), or
    something the device's Pad cannot express (None)."""
    widths = _ints(call.attrs.pad_width)
    ndim = len(widths) // 2
    padded = {i for i in range(ndim) if widths[2 * i] or widths[2 * i + 1]}
    if ndim >= 2 and padded <= {ndim - 2, ndim - 1}:
        return False
    if ndim >= 3 and padded <= {ndim - 3, ndim - 2}:
        return True
    return None


def _pad(call: relax.Call) -> Lowered:
    widths = _ints(call.attrs.pad_width)
    channel_last = _pad_layout(call)
    w = len(widths) // 2 - (2 if channel_last else 1)  # the dim padded left/right; w - 1 is top/bottom
    pad = (widths[2 * w], widths[2 * w + 1], widths[2 * w - 2], widths[2 * w - 1])
    return Lowered("Pad", [call.args[0]], {"pad": pad, "mode": call.attrs.pad_mode, "channel_last": channel_last,
                                           "value": float(call.attrs.pad_value)})


def _pad_supported(call: relax.Call) -> bool:
    return call.attrs.pad_mode in ("constant", "replicate", "reflect") and _pad_layout(call) is not None


def _cast_supported(call: relax.Call) -> bool:
    return _dtype(call.args[0]) in DEVICE_DTYPES and str(call.attrs.dtype) in CAST_DTYPES


def _binary(relax_name: str, pybuda_op: str, *aliases: str) -> OpEntry:
    return OpEntry("relax." + relax_name, pybuda_op, 2, _same(pybuda_op), fallback_aliases=aliases)


def _unary(relax_name: str, pybuda_op: str, attrs=lambda call: {}, *aliases: str) -> OpEntry:
    return OpEntry("relax." + relax_name, pybuda_op, 1, _same(pybuda_op, attrs), fallback_aliases=aliases)


OP_TABLE: tuple[OpEntry, ...] = (
    # elementwise binary, comparisons and logic
    OpEntry("relax.matmul", "Matmul", 2, _same("Matmul"), fallback_aliases=("matmul", "dense", "batch_matmul")),
    _binary("add", "Add"), _binary("subtract", "Subtract"), _binary("multiply", "Multiply"),
    _binary("divide", "Divide"), _binary("maximum", "Max"), _binary("minimum", "Min"), _binary("power", "Power"),
    _binary("equal", "Equal"), _binary("not_equal", "NotEqual"), _binary("greater", "Greater"),
    _binary("greater_equal", "GreaterEqual"), _binary("less", "Less"), _binary("less_equal", "LessEqual"),
    _binary("logical_and", "LogicalAnd"), _binary("logical_or", "LogicalOr"),
    OpEntry("relax.where", "Where", 3, _same("Where")),
    # elementwise unary
    _unary("nn.relu", "Relu"), _unary("nn.gelu", "Gelu"),
    _unary("nn.gelu_tanh", "Gelu", lambda call: {"approximate": "tanh"}),
    _unary("nn.leakyrelu", "LeakyRelu", lambda call: {"alpha": float(call.attrs.alpha)}),
    _unary("sigmoid", "Sigmoid"), _unary("tanh", "Tanh"), _unary("exp", "Exp"), _unary("sqrt", "Sqrt"),
    _unary("log", "Log"), _unary("abs", "Abs"), _unary("sin", "Sin"), _unary("cos", "Cos"), _unary("erf", "Erf"),
    _unary("logical_not", "LogicalNot"),
    OpEntry("relax.clip", "Clip", 3, _same("Clip", lambda call: {"min": _scalar(call.args[1]),
                                                                 "max": _scalar(call.args[2])}),
            check=lambda call: None not in (_scalar(call.args[1]), _scalar(call.args[2]))),
    OpEntry("relax.astype", "Cast", 1, _same("Cast", lambda call: {"dtype": str(call.attrs.dtype)}),
            check=_cast_supported, fallback_aliases=("cast",)),
    # normalisation
    _unary("nn.softmax", "nn.Softmax", lambda call: {"dim": int(call.attrs.axis)}),
    _unary("nn.log_softmax", "nn.LogSoftmax", lambda call: {"dim": int(call.attrs.axis)}),
    OpEntry("relax.nn.layer_norm", "nn.Layernorm", 3, _layer_norm, check=_layer_norm_supported,
            fallback_aliases=("layernorm",)),
    # their backward ops (call_pure_packed of tvm_buda.grad_ops' functions: tensors, then attributes)
    OpEntry(grad_ops.SOFTMAX_BW, "nn.SoftmaxBw", 3,
            _same("nn.SoftmaxBw", lambda call: {"dim": int(grad_ops.attribute(call, 2))})),
    OpEntry(grad_ops.LAYERNORM_BW, "nn.LayernormBw", 6, _layernorm_bw),
    OpEntry(grad_ops.GELU_DERIVATIVE, "GeluDerivative", 2,
            _same("GeluDerivative", lambda call: {"approximate": grad_ops.approximation(call)})),
    # reductions
    OpEntry("relax.sum", "ReduceSum", 1, _reduce("ReduceSum"), check=_single_axis, fallback_aliases=("reduce_sum",)),
    OpEntry("relax.mean", "ReduceAvg", 1, _reduce("ReduceAvg"), check=_single_axis, fallback_aliases=("reduce_avg",)),
    OpEntry("relax.max", "ReduceMax", 1, _reduce("ReduceMax"), check=_single_axis, fallback_aliases=("reduce_max",)),
    OpEntry("relax.min", "ReduceMin", 1, _reduce("ReduceMin"), check=_single_axis, fallback_aliases=("reduce_min",)),
    OpEntry("relax.argmax", "Argmax", 1, _argmax, int_result=True),
    # convolution and pooling
    OpEntry("relax.nn.conv2d", "Conv2d", 2, _conv("Conv2d"), check=_conv_layouts("OIHW"), fallback_aliases=("conv2d",)),
    OpEntry("relax.nn.conv2d_transpose", "Conv2dTranspose", 2, _conv("Conv2dTranspose"),
            check=_conv_layouts("IOHW"), fallback_aliases=("conv2d_transpose",)),
    OpEntry("relax.nn.max_pool2d", "MaxPool2d", 1, _pool("MaxPool2d"), check=_pool_supported),
    OpEntry("relax.nn.avg_pool2d", "AvgPool2d", 1, _pool("AvgPool2d"), check=_pool_supported),
    # tensor manipulation
    OpEntry("relax.permute_dims", "Transpose", 1, _permute, fallback_aliases=("transpose",)),
    OpEntry("relax.reshape", "Reshape", 2, _reshape, check=_static_shape),
    OpEntry("relax.flatten", "Reshape", 1, _reshape, check=_static_shape),
    OpEntry("relax.squeeze", "Squeeze", 1, _squeeze, check=_static_shape),
    OpEntry("relax.expand_dims", "Unsqueeze", 1, _expand_dims, check=_static_shape),
    OpEntry("relax.broadcast_to", "BroadcastTo", 2,
            lambda call: Lowered("BroadcastTo", [call.args[0]], {"shape": _shape(call)}), check=_static_shape),
    OpEntry("relax.strided_slice", "Index", 5, _strided_slice, check=_strided_slice_supported),
    OpEntry("relax.concat", "Concatenate", 1, _same("Concatenate", lambda call: {"axis": int(call.attrs.axis)}),
            check=lambda call: isinstance(call.args[0], relax.Tuple) and call.attrs.axis is not None),
    OpEntry("relax.nn.pad", "Pad", 1, _pad, check=_pad_supported),
)

OPS_BY_RELAX_NAME: dict[str, OpEntry] = {entry.relax_op: entry for entry in OP_TABLE}


def _dtypes_supported(call: relax.Call, entry: OpEntry) -> bool:
    inputs = [_dtype(a) for a in _tensor_args(call)]
    output = _dtype(call)
    if output is None:  # tuple results: nothing on the device returns several tensors
        return False
    output_ok = output in DEVICE_DTYPES or (entry.int_result and output.startswith(("int", "uint")))
    return output_ok and all(d in DEVICE_DTYPES for d in inputs if d is not None)


def supported_on_device(call: relax.Call) -> bool:
    """Whether the device can run this call: a table entry, device dtypes, its own check."""
    entry = OPS_BY_RELAX_NAME.get(call_op_name(call))
    return entry is not None and _dtypes_supported(call, entry) and entry.check(call)


def lower_call(call: relax.Call) -> Lowered:
    """Codegen hook: the PyBuda op for one Relax call inside a device function."""
    return OPS_BY_RELAX_NAME[call_op_name(call)].convert(call)
