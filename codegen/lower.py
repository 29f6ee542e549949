"""Relax device function -> ModuleGraph: one OpLine per Relax op, names from one Namespace.

The op-specific knowledge (which PyBuda op a Relax call becomes) is injected as `lower_call`,
so this module stays independent of the op table that tvm_buda owns.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import tvm
from tvm import relax

from .graph import ModuleGraph, OpLine
from .namespace import Namespace


class CodegenError(RuntimeError):
    pass


def lower_function(
    func: relax.Function,
    arg_bindings: list,
    lower_call: Callable,
    module_name: str,
    class_name: str,
    lower_composite: Callable | None = None,
) -> ModuleGraph:
    """Lower one function with Codegen="buda".

    arg_bindings: per function parameter, None (a runtime input), or ("parameter"|"constant", hint,
    value, source) when every call site passes the same known weight or constant; `source` names
    it in the host graph ("" for literal constants). Roles are recorded as (kind, name, source).
    """
    return _Lowerer(lower_call, lower_composite).run(func, arg_bindings, module_name, class_name)


class _Lowerer:
    def __init__(self, lower_call: Callable, lower_composite: Callable | None = None):
        self.lower_call = lower_call
        self.lower_composite = lower_composite or (lambda func: None)
        self.ns = Namespace()
        self.ops: list[OpLine] = []
        self.parameters: dict[str, np.ndarray] = {}
        self.constants: dict[str, np.ndarray] = {}
        self.source_ops: list[str] = []
        self.layer_of: dict[str, str] = {}  # expression -> framework layer it comes from (for op names)

    def run(self, func, arg_bindings, module_name, class_name) -> ModuleGraph:
        env: dict = {}
        inputs, roles = [], []
        for param, binding in zip(func.params, arg_bindings):
            if binding is None:
                name = self.ns.create_name(param.name)
                inputs.append(name)
                roles.append(("input", name, param.name))
                env[param] = name
            else:
                kind, hint, value, source = binding
                ref = self._weight_reference(kind, hint, value)
                roles.append(("literal", ref, source) if _is_literal(ref) else (kind, _bare(ref), source))
                env[param] = ref
        result = self._walk(func, env)
        outputs = result if isinstance(result, list) else [result]
        if any(isinstance(o, list) for o in outputs):
            raise CodegenError("nested tuple outputs are not supported in a device function")
        return ModuleGraph(module_name, class_name, inputs, self.parameters, self.constants, self.ops,
                           outputs, roles, self.source_ops)

    # ---- weights ----------------------------------------------------------------------------
    def _weight_reference(self, kind: str, hint: str, value: np.ndarray) -> str:
        """How generated code refers to a weight: self.<param>, self.get_constant(...), or a literal
        for a scalar constant (reads better: `Multiply("scale", x, 0.125)`)."""
        if kind == "constant" and value.size == 1 and value.ndim <= 1 and value.dtype.kind in "fiu":
            return _literal(value.reshape(()).item())
        name = self.ns.create_name(hint)
        (self.parameters if kind == "parameter" else self.constants)[name] = np.ascontiguousarray(value)
        if kind == "parameter":
            self.layer_of[f"self.{name}"] = _layer_name(name)
            return f"self.{name}"
        return f'self.get_constant("{name}")'

    # ---- body -------------------------------------------------------------------------------
    def _walk(self, func: relax.Function, env: dict):
        body = func.body
        local_functions = {}
        for block in body.blocks:
            for binding in block.bindings:
                value = binding.value
                if isinstance(value, relax.Function):
                    local_functions[binding.var] = value
                elif isinstance(value, relax.Call) and isinstance(value.op, relax.Var) and value.op in local_functions:
                    inner = local_functions[value.op]
                    inner_env = {p: self._lookup(a, env) for p, a in zip(inner.params, value.args)}
                    fused = self.lower_composite(inner)
                    if fused is not None:  # a fused pattern (matmul + bias, ...) is one PyBuda op
                        env[binding.var] = self._emit_lowered(fused, inner_env, binding.var, _op_names(inner))
                    else:
                        env[binding.var] = self._walk(inner, inner_env)
                elif isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op):
                    env[binding.var] = self._emit(value, env)
                else:
                    env[binding.var] = self._lookup(value, env)
        return self._lookup(body.body, env)

    def _lookup(self, expr, env):
        if isinstance(expr, relax.Var):
            if expr not in env:
                raise CodegenError(f"variable {expr.name} used before it is defined")
            return env[expr]
        if isinstance(expr, relax.Tuple):
            return [self._lookup(f, env) for f in expr.fields]
        if isinstance(expr, relax.TupleGetItem):
            return self._lookup(expr.tuple_value, env)[expr.index]
        value = tensor_constant(expr)
        if value is not None:
            return self._weight_reference("constant", "const", value)
        raise CodegenError(f"cannot generate code for {type(expr).__name__} in a device function")

    def _emit(self, call: relax.Call, env) -> str:
        return self._emit_lowered(self.lower_call(call), env, call, [_source_op(call)])

    def _emit_lowered(self, lowered, env, result, source_ops: list[str]) -> str:
        """One generated line; `result` is the Relax expression it computes (for its static shape)."""
        self.source_ops.extend(source_ops)
        short = lowered.op.split(".")[-1].lower()
        inputs = [self._lookup(x, env) for x in lowered.inputs]
        layer = next((self.layer_of[i] for i in inputs if isinstance(i, str) and i in self.layer_of), None)
        hint = (layer if layer.endswith(short) else f"{layer}_{short}") if layer else f"{short}_{len(self.ops)}"
        name = self.ns.create_name(hint)
        if layer and lowered.op in _WEIGHT_LAYOUT_OPS and inputs and inputs[0] in self.layer_of:
            self.layer_of[name] = layer  # a transposed weight still belongs to its layer
        self.ops.append(OpLine(lowered.op, name, name, inputs, dict(lowered.attrs),
                               [static_shape(x) for x in lowered.inputs], static_shape(result),
                               "+".join(source_ops)))
        return name


def _op_names(func: relax.Function) -> list[str]:
    """Relax op names computed inside a (composite) function, in order."""
    return [_source_op(b.value) for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, relax.Call) and isinstance(b.value.op, tvm.ir.Op)]


def _source_op(call: relax.Call) -> str:
    """"nn.softmax" for R.nn.softmax; the function's name for a call_pure_packed ("tvm_buda.softmax_bw")."""
    if call.op.name == "relax.call_pure_packed" and isinstance(call.args[0], relax.ExternFunc):
        return str(call.args[0].global_symbol)
    return call.op.name.removeprefix("relax.")


_WEIGHT_LAYOUT_OPS = frozenset({"Transpose", "Reshape", "Permute"})
_WEIGHT_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta", "_kernel")


def _layer_name(param: str) -> str:
    """"encoder_layer_0_attention_self_query_weight" -> "encoder_layer_0_attention_self_query"."""
    for suffix in _WEIGHT_SUFFIXES:
        if param.endswith(suffix) and len(param) > len(suffix):
            return param[: -len(suffix)]
    return param


def _literal(value) -> str:
    """Python source for a scalar; inf and nan are not literals in Python."""
    if isinstance(value, float) and not np.isfinite(value):
        return f'float("{value}")'
    return repr(value)


def _is_literal(ref: str) -> bool:
    return not ref.startswith("self.")


def _bare(ref: str) -> str:
    """self.x -> x; self.get_constant("c") -> c."""
    return ref.removeprefix("self.").removeprefix('get_constant("').removesuffix('")')


def tensor_constant(expr) -> np.ndarray | None:
    """The value of a Relax tensor constant, or None (IntImm/FloatImm are Constants too: excluded)."""
    if isinstance(expr, tvm.ir.Constant) and isinstance(getattr(expr, "value", None), tvm.runtime.Tensor):
        return expr.value.numpy()
    return None


def static_shape(expr) -> tuple[int, ...]:
    """The static shape of a tensor-typed expression, () when unknown or not a tensor."""
    ty = getattr(expr, "ty", None)
    shape = getattr(ty, "shape", None) if isinstance(ty, relax.TensorType) else None
    if shape is None:
        return ()
    try:
        return tuple(int(d) for d in shape)
    except TypeError:  # symbolic dims
        return ()
