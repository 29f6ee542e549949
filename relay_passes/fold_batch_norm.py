"""FoldBatchNormIntoConv: inference batch norm after a convolution becomes the convolution's own
weights and bias, as PyBuda's compiler did for inference graphs.

    batch_norm(conv2d(x, W) [+ b], gamma, beta, mean, var)[0]
        -> conv2d(x, W * s) + (beta + (b - mean) * s),    s = gamma / sqrt(var + eps)

(exact algebra: the convolution is linear in W). Four elementwise passes over every activation
(subtract, multiply, multiply, add, each rounded to the output format) become one bias add that
the conv + bias pattern fuses into the convolution.

Fires only when every operand other than `x` has a value known at compile time: a Relax constant,
or a weight parameter whose value the caller hands in (`weights`, by parameter name), and the
convolution's result has no other user. The folded kernel and bias are computed here in numpy
(float32) and become constants (TVM's FoldConstant would build one kernel per op for this);
`baked` collects the names of the weight parameters whose values went into those constants, so a
later update of one can be refused instead of silently ignored.
"""

from __future__ import annotations

import numpy as np
from tvm import relax
from tvm.relax.dpl import is_op, is_tuple_get_item, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import constant_array


@function_pass(opt_level=0, name="FoldBatchNormIntoConv")
class FoldBatchNormIntoConv:
    def __init__(self, weights: dict | None = None, baked: set | None = None):
        self.values = weights or {}
        self.baked = baked if baked is not None else set()
        self.x, self.w = wildcard(), wildcard()
        self.conv = is_op("relax.nn.conv2d")(self.x, self.w)
        self.conv_bias = wildcard()
        self.biased = is_op("relax.add")(self.conv, self.conv_bias)
        self.gamma, self.beta, self.mean, self.var = wildcard(), wildcard(), wildcard(), wildcard()
        self.bn = is_op("relax.nn.batch_norm")(self.conv | self.biased, self.gamma, self.beta, self.mean, self.var)
        self.pattern = is_tuple_get_item(self.bn, 0)

    def transform_function(self, func, mod, ctx):
        n_inputs = int(func.attrs["num_input"]) if func.attrs is not None and "num_input" in func.attrs \
            else len(func.params)
        self.weights = [p for p in func.params[n_inputs:] if p.name in self.values]
        self.single_use = _single_use_values(func)
        return rewrite_call(self.pattern, self.rewrite, func)

    def _value(self, expr) -> np.ndarray | None:
        """The value of `expr` if known at compile time (a constant or a handed-in weight), else None."""
        value = constant_array(expr)
        if value is None and isinstance(expr, relax.Var) and any(expr.same_as(w) for w in self.weights):
            value = np.asarray(self.values[expr.name])
        if value is None and isinstance(expr, relax.Call) and getattr(expr.op, "name", None) == "relax.reshape":  # a bias as (1, C, 1, 1)
            inner = self._value(expr.args[0])
            value = None if inner is None else inner.reshape([int(d) for d in expr.ty.shape])
        return value

    def rewrite(self, expr, matches):
        conv, bn = matches[self.conv], matches[self.bn]
        names = [self.w, self.gamma, self.beta, self.mean, self.var] + ([self.conv_bias] if self.biased in matches else [])
        values = [self._value(matches[p]) for p in names]
        attrs = bn.attrs
        out_layout = str(conv.attrs.out_layout or conv.attrs.data_layout)
        kernel_layout = str(conv.attrs.kernel_layout)
        dtype = str(conv.ty.dtype)
        if (any(v is None for v in values)
                or not all(any(matches[p].same_as(c) for c in self.single_use)
                           for p in ([self.conv, self.biased] if self.biased in matches else [self.conv]))
                or bool(getattr(attrs, "training", False)) or dtype not in ("float32", "float16")
                or "O" not in kernel_layout or "C" not in out_layout
                or int(attrs.axis) % len(out_layout) != out_layout.index("C")):
            return expr
        w, gamma, beta, mean, var = (np.asarray(v, np.float32) for v in values[:5])
        channels = int(conv.ty.shape[out_layout.index("C")])
        if len(values) == 6:  # the conv's own bias, if it varies along channels only
            per_channel = [channels if a == "C" else 1 for a in out_layout]
            bias = np.asarray(values[5], np.float32)
            if bias.ndim > len(out_layout) or any(
                    d not in (1, want) for d, want in zip(bias.shape[::-1], per_channel[::-1])):
                return expr
            mean = mean - np.broadcast_to(bias.reshape((1,) * (len(out_layout) - bias.ndim) + bias.shape),
                                          per_channel).reshape(-1)
        scale = 1 / np.sqrt(var + np.float32(attrs.epsilon))
        scale = gamma * scale if attrs.scale else scale
        shift = (beta if attrs.center else np.float32(0)) - mean * scale
        kernel = w * scale.reshape([channels if a == "O" else 1 for a in kernel_layout])
        bias = shift.reshape([channels if a == "C" else 1 for a in out_layout])
        folded = relax.op.nn.conv2d(
            matches[self.x], relax.const(kernel.astype(dtype), dtype), strides=conv.attrs.strides,
            padding=conv.attrs.padding, dilation=conv.attrs.dilation, groups=conv.attrs.groups,
            data_layout=conv.attrs.data_layout, kernel_layout=kernel_layout, out_layout=conv.attrs.out_layout,
            out_dtype=conv.attrs.out_dtype)
        self.baked.update(v.name for p in names for v in _vars_in(matches[p]))
        return relax.op.add(folded, relax.const(bias.astype(dtype), dtype))


def _vars_in(expr) -> list:
    """The parameter variables an operand reads (itself, or what it reshapes)."""
    if isinstance(expr, relax.Var):
        return [expr]
    if isinstance(expr, relax.Call) and getattr(expr.op, "name", None) == "relax.reshape":
        return _vars_in(expr.args[0])
    return []


def _single_use_values(func) -> list:
    """Values bound in dataflow blocks whose variable has exactly one user."""
    out = []
    for block in func.body.blocks:
        if not isinstance(block, relax.DataflowBlock):
            continue
        users = relax.analysis.udchain(block)
        out += [b.value for b in block.bindings if len(users.get(b.var, [])) == 1]
    return out
