"""Host ops lowered here rather than by TVM's legalization, where TVM's kernel makes its LLVM
backend print warnings to the user.

`relax.grad.take_backward` (an embedding's gradient, on the host in training builds): TVM 0.27
builds its loops under `T.seq_scope()`, a `pragma_scope` attribute the LLVM code generator does
not know, so every training compile printed "codegen_cpu.cc: Warning: Unknown pragma
pragma_scope" once per embedding. The kernel below is the same loops (zero the output, then for
each column, add the gradient rows in index order), under a two-step serial loop instead of that
attribute: the same sums in the same order, bit for bit.
"""

from __future__ import annotations

import tvm
from tvm import relax, te, tirx
from tvm.relax.expr_functor import PyExprMutator, mutator
from tvm.script.ir_builder import IRBuilder
from tvm.script.ir_builder import tirx as T
from tvm.tirx.script.builder.utils import buffer_proxy

_TAKE_BACKWARD = "relax.grad.take_backward"


def _product(dims):
    out = 1
    for d in dims:
        out = out * d
    return out


def _take_backward(grad, x, indices, axis: int):
    """te.extern: out = zeros_like(x); out[.., indices[l], ..] += grad[.., l, ..] for l in order."""

    def gen_ir(grad_buf, x_buf, indices_buf, out_buf):
        out, g, idx = buffer_proxy(out_buf), buffer_proxy(grad_buf), buffer_proxy(indices_buf)
        dims = list(x_buf.shape)
        outer, rows, inner, count = _product(dims[:axis]), dims[axis], _product(dims[axis + 1:]), indices_buf.shape[0]
        size = outer * rows * inner
        with IRBuilder() as ib:
            with T.serial(2) as step:  # one statement at the top: step 0 zeroes, step 1 accumulates
                with T.If(step == 0):
                    with T.Then():
                        with T.serial(size) as i:
                            out[i] = tirx.const(0, x_buf.dtype)
                    with T.Else():
                        with T.serial(outer * inner) as fused:
                            o, j = fused // inner, fused % inner
                            with T.serial(count) as n:
                                at = o * inner * rows + idx[n] * inner + j
                                out[at] = out[at] + g[o * inner * count + n * inner + j]
        return ib.get()

    out_buf = tirx.decl_buffer(x.shape, x.dtype, "out_buf")
    return te.extern([x.shape], [grad, x, indices], lambda ins, outs: gen_ir(*ins, outs[0]), dtype=x.dtype,
                     out_buffers=[out_buf], name="take_backward", tag="take_backward")


def _lowerable(call: relax.Call) -> bool:
    indices = call.args[2].ty
    return (call.attrs.axis is not None and isinstance(indices, relax.TensorType) and indices.ndim == 1
            and isinstance(call.args[1].ty, relax.TensorType) and call.args[1].ty.ndim > 0)


@mutator
class _Lowerer(PyExprMutator):
    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not (isinstance(call.op, tvm.ir.Op) and call.op.name == _TAKE_BACKWARD and _lowerable(call)):
            return call
        axis = int(call.attrs.axis) % call.args[1].ty.ndim
        return self.builder_.call_te(lambda g, x, i: _take_backward(g, x, i, axis), *call.args,
                                     primfunc_name_hint="take_backward")


def _calls(func, op_name: str) -> bool:
    found = []
    relax.analysis.post_order_visit(func, lambda e: isinstance(e, relax.Call) and isinstance(e.op, tvm.ir.Op)
                                    and e.op.name == op_name and found.append(e))
    return bool(found)


def lower_host_ops(mod: tvm.IRModule) -> tvm.IRModule:
    """`mod` with the host ops above lowered to TIR here (the rest is left to TVM's legalization)."""
    targets = [gv for gv, f in mod.functions.items() if isinstance(f, relax.Function) and _calls(f, _TAKE_BACKWARD)]
    if not targets:
        return mod
    lowerer = _Lowerer(mod)
    for gv in targets:
        lowerer.builder_.update_func(gv, lowerer.visit_expr(mod[gv]))
    return lowerer.builder_.get()
