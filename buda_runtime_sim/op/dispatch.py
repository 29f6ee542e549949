"""From an op call to a kernel: operand conversion, numerics lookup, error naming, recording."""

from __future__ import annotations

import functools
import math
import weakref
from typing import NamedTuple

import numpy as np

from .. import context
from ..module import Constant, Module, Parameter
from ..kernels import KERNELS, OpArgumentError, get_kernel
from ..stored_tensor import kept
from ..tensor import Tensor, plain_ints


def pybuda_op(fn):
    """Mark a public op function; accepts PyBuda's older spelling with a leading module argument
    (`Matmul(self, "mm", a, b)`), which is ignored."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if args and type(args[0]) is not str and isinstance(args[0], Module):
            args = args[1:]
        return fn(*args, **kwargs)

    return call


# Every op call runs the functions below: they read the thread's context and the kernel table
# directly (context.current() and get_kernel() are a frame each) and test the common types first.
_thread = context.thread_state


def run_op(op_type: str, name, inputs: list, layouts: dict | None = None, **attrs) -> Tensor:
    """layouts: {input index: layout} for weights the device holds in another shape (see
    Parameter.device_tensor); applied to parameters and constants only."""
    if type(name) is not str and not isinstance(name, str):
        raise TypeError(f"{op_type}: the first argument must be the op name (a string), got {type(name).__name__}")
    ctx = getattr(_thread, "context", None) or context.current()
    if ctx.tracer is not None:
        return ctx.tracer(op_type, name, inputs, attrs)
    config = ctx.numerics   # resolve's answer if it has one (resolve's first lines, without its frame)
    numerics = config._resolved.get((op_type, name)) if config.rules == config._resolved_rules else None
    if numerics is None:
        numerics = config.resolve(op_type, name)
    for x in inputs:
        if type(x) is not Tensor and not isinstance(x, Tensor):
            return _run_converting(ctx, op_type, name, inputs, layouts, attrs, numerics)
    # Inside a program every operand is a device tensor already: straight to the kernel.
    kernel = KERNELS.get(op_type) or get_kernel(op_type)
    try:
        result = kernel(inputs, attrs, numerics)
    except OpArgumentError as exc:
        raise exc.naming(f"{op_type} {name!r}") from None
    if ctx.record_trace or name in ctx.save_intermediates or context.open_ledgers:
        _report(ctx, op_type, name, inputs, result, numerics, attrs)
    return result


def _run_converting(ctx, op_type: str, name: str, inputs: list, layouts, attrs: dict, numerics) -> Tensor:
    """run_op with operands to convert (weights, constants, host arrays, scalars), and consteval."""
    # (an activation first, as in most ops with a weight or scalar operand: no consteval)
    cache, key = (None, None) if type(inputs[0]) is Tensor else _consteval_slot(op_type, name, inputs, attrs, numerics)
    result = cache.get(key) if cache is not None else None
    tensors = None
    if result is None or ctx.record_trace:  # a cached consteval result needs no operand
        tensors = []
        try:
            for i, x in enumerate(inputs):
                # (a consteval op's weights are not kept beside its result: Parameter.device_tensor)
                if type(x) is Parameter and not layouts:   # _as_tensor's first case, without its frame
                    x = x.device_tensor(numerics.weight_df if numerics.weight_df is not None else numerics.output_df,
                                        None, cache is None)
                elif type(x) is not Tensor and not isinstance(x, Tensor):
                    x = _as_tensor(op_type, name, i, x, numerics, layouts.get(i) if layouts else None, cache is None)
                tensors.append(x)
        except OpArgumentError as exc:  # a weight that cannot take the layout the device holds it in
            raise exc.naming(f"{op_type} {name!r}") from None
    if result is None:
        kernel = KERNELS.get(op_type) or get_kernel(op_type)
        try:
            result = kernel(tensors, attrs, numerics)
        except OpArgumentError as exc:
            raise exc.naming(f"{op_type} {name!r}") from None
        if cache is not None:           # kept between runs: as its format's bytes where large
            result = cache[key] = kept(result)
    if ctx.record_trace or name in ctx.save_intermediates or context.open_ledgers:
        _report(ctx, op_type, name, tensors, result, numerics, attrs, inputs)
    return result


def _report(ctx, op_type: str, name: str, tensors: list | None, result: Tensor, numerics, attrs: dict,
            operands: list | None = None) -> None:
    """Tell whoever listens about an executed op: the trace, the intermediates queue, the chip ledger,
    the observer. tensors is None for a cached consteval result (weights only; never while a trace is
    recorded); operands are the op's arguments as given (scalars, parameters, constants, tensors)
    when they differ from `tensors`."""
    if ctx.record_trace:
        ctx.trace.append(context.OpRecord(op_type, name, [t.shape for t in tensors], result.shape, numerics, attrs))
        if ctx.observer is not None:
            ctx.observer(op_type, name, operands if operands is not None else tensors, tensors, result, numerics, attrs)
    if name in ctx.save_intermediates:
        ctx.intermediates[name] = result
    chips = context.chip_ledger()
    if chips is not None:
        chips.record(name, tensors or (), result)


class ConstevalKey(NamedTuple):
    """Where a consteval result is kept in its first parameter's `consteval` dict. `operands` are
    (id, version) of each Parameter and (id of the value,) of each Constant: a result lives until
    a weight changes. Device images rebuild these keys for the results they carry."""

    op_type: str
    name: str
    attrs: str              # repr of the sorted attributes
    numerics: object        # the op's resolved OpNumerics
    operands: tuple


_new_tuple = tuple.__new__


def consteval_key(op_type: str, name: str, attrs: str, numerics, inputs: list) -> ConstevalKey:
    operands = tuple((id(x), x.version) if isinstance(x, Parameter) else (id(x.value),) for x in inputs)
    return ConstevalKey(op_type, name, attrs, numerics, operands)


def _consteval_slot(op_type: str, name: str, inputs: list, attrs: dict, numerics):
    """(cache, key) for an op computed from weights only (a transposed weight, a reshaped bias):
    like PyBuda's consteval, it runs once and is reused until a parameter changes. The key is
    consteval_key's, built in the same pass that checks the operands."""
    first = None
    operands = []
    for x in inputs:   # (every op with a weight or scalar operand asks: a plain loop)
        if isinstance(x, Parameter):
            if first is None:
                first = x
            operands.append((id(x), x.version))
        elif isinstance(x, Constant):
            operands.append((id(x.value),))
        else:
            return None, None
    if first is None:
        return None, None
    # (tuple.__new__: a NamedTuple's own __new__ is a Python function)
    return first.consteval, _new_tuple(ConstevalKey, (op_type, name, _attrs_repr(attrs), numerics, tuple(operands)))


# attribute items -> repr(sorted(items)), for attributes whose values are ints, strings, None or
# tuples of ints: equal items of those types have equal reprs (unlike 0, 0.0, -0.0 and False).
_ATTR_REPRS: dict[tuple, str] = {}
_ATTR_REPRS_MAX = 4096


def _attrs_repr(attrs: dict) -> str:
    """repr(sorted(attrs.items())), the consteval key's spelling of the attributes, kept per items."""
    items = tuple(attrs.items())
    for _, v in items:
        kind = type(v)
        if not (kind is int or kind is str or v is None or (kind is tuple and plain_ints(v))):
            return repr(sorted(items))
    text = _ATTR_REPRS.get(items)
    if text is None:
        if len(_ATTR_REPRS) >= _ATTR_REPRS_MAX:
            _ATTR_REPRS.clear()
        text = _ATTR_REPRS[items] = repr(sorted(items))
    return text


def _as_tensor(op_type: str, name: str, index: int, x, numerics, layout=None, keep: bool = True) -> Tensor:
    kind = type(x)   # the common cases first
    if kind is Parameter:
        return x.device_tensor(numerics.weight_df if numerics.weight_df is not None else numerics.output_df, layout,
                               keep)
    if kind is float or kind is int:
        return _scalar(x, numerics.output_df)
    if isinstance(x, Tensor):
        return x
    weight_df = numerics.weight_df if numerics.weight_df is not None else numerics.output_df
    if isinstance(x, Parameter):
        return x.device_tensor(weight_df, layout, keep)
    if isinstance(x, Constant):
        return _laid_out_constant(x.value, weight_df, layout)
    if x is None:
        raise TypeError(f"{op_type} {name!r}: operand {index} is None")
    if type(x) is float or type(x) is int:
        return _scalar(x, numerics.output_df)
    try:
        return Tensor.from_array(x, numerics.output_df)
    except Exception as exc:  # noqa: BLE001 - say which operand was bad
        raise TypeError(f"{op_type} {name!r}: operand {index} of type {type(x).__name__} is not a tensor") from exc


# (type, value, format) -> device tensor of a Python scalar operand (`Multiply(x, 0.5)`): the
# same few scalars come back every run, so each is converted once (bounded: cleared when full).
_SCALARS: dict[tuple, Tensor] = {}
_SCALARS_MAX = 4096


def _scalar(x, data_format) -> Tensor:
    key = (type(x), x, math.copysign(1.0, x), data_format)   # the sign keeps -0.0 apart from 0.0
    tensor = _SCALARS.get(key)
    if tensor is None:
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
        tensor = Tensor.from_array(x, data_format)
        tensor.padded.flags.writeable = False
        _SCALARS[key] = tensor
    return tensor


# id(constant value) -> (weakref, {(format, layout): device tensor}): a constant (held in its own
# shape, or in another layout such as a TFLite/ONNX conv kernel) is converted once, like a parameter.
_LAID_OUT: dict[int, tuple] = {}


def _laid_out_constant(value, data_format, layout) -> Tensor:
    def convert():
        array = np.asarray(value)
        return Tensor.from_array(array if layout is None else layout(array), data_format)

    entry = _LAID_OUT.get(id(value))
    if entry is None or entry[0]() is not value:
        try:
            ref = weakref.ref(value, lambda _, key=id(value): _LAID_OUT.pop(key, None))
        except TypeError:  # not weak-referenceable: convert every call
            return convert()
        entry = _LAID_OUT[id(value)] = (ref, {})
    key = (data_format, layout)
    if key not in entry[1]:
        tensor = convert()
        tensor.padded.flags.writeable = False
        entry[1][key] = tensor
    return entry[1][key]
