"""The device op table: the single source of truth for what runs on the simulated device.

Each entry names the Relax op, the PyBuda op it becomes, how the call's arguments and attributes
convert, and when the device can take it. Partition patterns (`tvm_buda.partition`) and the
code generator (`codegen`) are both derived from this table; kernels are keyed by `pybuda_op`.
Adding an op: one entry here, one kernel in buda_runtime_sim/ops, one test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from tvm import ir, relax

FLOAT_DTYPES = frozenset({"float32", "float16", "bfloat16"})


@dataclass(frozen=True)
class Lowered:
    """One PyBuda op call: `pybuda.op.<op>(name, *inputs, **attrs)`."""

    op: str
    inputs: list
    attrs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class OpEntry:
    relax_op: str                             # e.g. "relax.nn.softmax"
    pybuda_op: str                            # e.g. "nn.Softmax" (attribute path under pybuda.op)
    num_args: int                             # arguments of the Relax call (tensors and shapes)
    convert: Callable[[relax.Call], Lowered]  # Relax call -> PyBuda op call
    check: Callable[[relax.Call], bool] = lambda call: True  # extra constraint beyond float dtypes
    fallback_aliases: tuple[str, ...] = ()    # PyBuda/Relay names users may use in cpu_fallback_ops

    @property
    def name(self) -> str:
        """Short name, used for patterns ("buda.<name>") and reports."""
        return self.relax_op.removeprefix("relax.")


# ---- attribute helpers --------------------------------------------------------------------
def _ints(values) -> list[int]:
    return [int(v) for v in values]


def _dtype(expr) -> str | None:
    ty = getattr(expr, "ty", None)
    return str(ty.dtype) if isinstance(ty, relax.TensorType) else None


def _same(op: str, attrs: Callable[[relax.Call], dict] = lambda call: {}):
    """Convert a call whose tensor arguments map one to one."""
    return lambda call: Lowered(op, list(call.args), attrs(call))


def _permute(call: relax.Call) -> Lowered:
    ndim = call.args[0].ty.ndim
    axes = _ints(call.attrs.axes) if call.attrs.axes is not None else list(reversed(range(ndim)))
    moved = [i for i, a in enumerate(axes) if a != i]
    if len(moved) == 2:  # a single swap is PyBuda's Transpose
        return Lowered("Transpose", [call.args[0]], {"dim0": moved[0], "dim1": moved[1]})
    return Lowered("Permute", [call.args[0]], {"axes": axes})


def _reshape(call: relax.Call) -> Lowered:
    return Lowered("Reshape", [call.args[0]], {"shape": _ints(call.ty.shape)})


def _layer_norm(call: relax.Call) -> Lowered:
    return Lowered(
        "nn.Layernorm", list(call.args[:3]), {"dim": int(call.attrs.axes[0]), "epsilon": float(call.attrs.epsilon)}
    )


def _layer_norm_supported(call: relax.Call) -> bool:
    axes = _ints(call.attrs.axes)
    ndim = call.args[0].ty.ndim
    return len(axes) == 1 and axes[0] % ndim == ndim - 1 and bool(call.attrs.center) and bool(call.attrs.scale)


def _static_shape(call: relax.Call) -> bool:
    shape = getattr(call.ty, "shape", None)
    return shape is not None and all(hasattr(d, "value") for d in shape)


OP_TABLE: tuple[OpEntry, ...] = (
    OpEntry("relax.matmul", "Matmul", 2, _same("Matmul"), fallback_aliases=("matmul", "dense", "batch_matmul")),
    OpEntry("relax.add", "Add", 2, _same("Add")),
    OpEntry("relax.subtract", "Subtract", 2, _same("Subtract")),
    OpEntry("relax.multiply", "Multiply", 2, _same("Multiply")),
    OpEntry("relax.nn.relu", "Relu", 1, _same("Relu")),
    OpEntry("relax.nn.gelu", "Gelu", 1, _same("Gelu")),
    OpEntry("relax.nn.gelu_tanh", "Gelu", 1, _same("Gelu", lambda call: {"approximate": "tanh"})),
    OpEntry("relax.nn.softmax", "nn.Softmax", 1, _same("nn.Softmax", lambda call: {"dim": int(call.attrs.axis)})),
    OpEntry("relax.nn.layer_norm", "nn.Layernorm", 3, _layer_norm, check=_layer_norm_supported,
            fallback_aliases=("layernorm",)),
    OpEntry("relax.permute_dims", "Transpose", 1, _permute, fallback_aliases=("transpose",)),
    OpEntry("relax.reshape", "Reshape", 2, _reshape, check=_static_shape),
)

OPS_BY_RELAX_NAME: dict[str, OpEntry] = {entry.relax_op: entry for entry in OP_TABLE}


def supported_on_device(call: relax.Call) -> bool:
    """Whether the device can run this call: a table entry, float tensors only, its own check."""
    entry = OPS_BY_RELAX_NAME.get(call.op.name) if isinstance(call.op, ir.Op) else None
    if entry is None:
        return False
    dtypes = [_dtype(a) for a in call.args if _dtype(a) is not None] + [_dtype(call)]
    return all(d in FLOAT_DTYPES for d in dtypes if d is not None) and entry.check(call)


def lower_call(call: relax.Call) -> Lowered:
    """Codegen hook: the PyBuda op for one Relax call inside a device function."""
    return OPS_BY_RELAX_NAME[call.op.name].convert(call)
