"""Forward and backward Relax functions for training, from an imported model's `main`.

TVM's reverse-mode autodiff (`relax.transform.Gradient`) differentiates a scalar. A device module
in a pipeline receives the gradient of its outputs (`dy`) from whatever follows it (a loss, a
CPU module), so we differentiate `sum(y * dy)`, whose gradient with respect to the weights is the
vector-Jacobian product. The adjoint function computes forward and backward in one block; we
split it so forward runs once per step:

- forward(inputs..., weights...) -> (outputs..., saved...): the original bindings, returning
  also every value the backward bindings read (the activations PyBuda keeps for backward).
- backward(dy..., saved..., weights...) -> (grads...): the rest of the adjoint.

Both are ordinary Relax `main` functions, so the usual pipeline partitions them and generates
device modules: backward runs on the simulator in device formats, and ops the device lacks (an
embedding's gradient scatter) fall back to the host like in forward.
"""

from __future__ import annotations

from dataclasses import dataclass

import tvm
from tvm import relax

from . import gradients  # noqa: F401  (registers gradients TVM lacks)

OUT_PREFIX = "tvm_buda_out"
DY_PREFIX = "tvm_buda_dy"
LOSS_NAME = "tvm_buda_vjp_target"


@dataclass
class TrainingGraphs:
    forward: tvm.IRModule      # main(inputs..., weights...) -> (outputs..., saved...)
    backward: tvm.IRModule     # main(dy..., saved..., weights...) -> (grads...)
    num_outputs: int
    saved: list[tuple[str, tuple, str]]   # (name, shape, dtype) of each saved value, in order
    grad_names: list[str]                 # weight (or input) parameter name of each gradient


def _tensor_fields(ty) -> list:
    return list(ty.fields) if isinstance(ty, relax.TupleType) else [ty]


def vjp_target(main: relax.Function, num_inputs: int) -> relax.Function:
    """main(x..., w...) -> y  becomes  f(x..., dy..., w...) -> sum_i sum(y_i * dy_i) (a scalar)."""
    func = relax.utils.copy_with_new_vars(main)
    body = func.body
    if len(body.blocks) != 1 or not isinstance(body.blocks[0], relax.DataflowBlock):
        func = relax.transform.ConvertToDataflow()(tvm.IRModule({"main": func}))["main"]
        body = func.body
    if len(body.blocks) != 1:
        raise NotImplementedError("training: the imported graph has control flow or several blocks; "
                                  "only single-block graphs can be differentiated")
    out_types = _tensor_fields(func.ret_ty)
    for ty in out_types:
        if not isinstance(ty, relax.TensorType) or "float" not in str(ty.dtype):
            raise TypeError(f"training: every model output must be a float tensor, got {ty}")
    dys = [relax.Var(f"{DY_PREFIX}_{i}", ty) for i, ty in enumerate(out_types)]
    bindings = list(body.blocks[0].bindings)
    ret = body.body
    outs = list(ret.fields) if isinstance(ret, relax.Tuple) else [ret]
    if isinstance(func.ret_ty, relax.TupleType) and not isinstance(ret, relax.Tuple):
        outs = [relax.TupleGetItem(ret, i) for i in range(len(out_types))]
    new = []
    out_vars = []
    for i, (value, ty) in enumerate(zip(outs, out_types)):
        var = relax.DataflowVar(f"{OUT_PREFIX}_{i}", ty)
        new.append(relax.VarBinding(var, value))
        out_vars.append(var)
    total = None
    for i, (y, dy) in enumerate(zip(out_vars, dys)):
        prod = relax.DataflowVar(f"tvm_buda_prod_{i}", y.ty)
        part = relax.DataflowVar(f"tvm_buda_part_{i}", relax.TensorType((), y.ty.dtype))
        new += [relax.VarBinding(prod, relax.op.multiply(y, dy)),
                relax.VarBinding(part, relax.op.sum(prod))]
        if total is None:
            total = part
        else:
            acc = relax.DataflowVar(f"tvm_buda_acc_{i}", part.ty)
            new.append(relax.VarBinding(acc, relax.op.add(total, part)))
            total = acc
    loss = relax.Var(LOSS_NAME, total.ty)
    new.append(relax.VarBinding(loss, total))
    block = relax.DataflowBlock(bindings + new)
    params = list(func.params[:num_inputs]) + dys + list(func.params[num_inputs:])
    return relax.Function(params, relax.SeqExpr([block], loss), total.ty)


def _uses(expr) -> list:
    """Vars an expression reads (relax.Var and DataflowVar), in order, without duplicates."""
    found = []
    relax.analysis.post_order_visit(expr, lambda e: found.append(e) if isinstance(e, relax.Var) else None)
    return list(dict.fromkeys(found))


def _closure(roots, producers: dict) -> set:
    """Every binding var the roots depend on (through producers: var -> binding value)."""
    seen, stack = set(), list(roots)
    while stack:
        var = stack.pop()
        if var in seen or var not in producers:
            continue
        seen.add(var)
        stack.extend(_uses(producers[var]))
    return seen


def split_adjoint(adjoint: relax.Function, num_inputs: int, num_outputs: int):
    """The adjoint of `vjp_target` -> (forward function, backward function, saved specs)."""
    block = adjoint.body.blocks[0]
    bindings = list(block.bindings)
    producers = {b.var: b.value for b in bindings}
    by_name = {b.var.name: b.var for b in bindings}
    params = list(adjoint.params)
    inputs = params[:num_inputs]
    dys = params[num_inputs:num_inputs + num_outputs]
    weights = params[num_inputs + num_outputs:]
    outs = [by_name[f"{OUT_PREFIX}_{i}"] for i in range(num_outputs)]
    grads = list(adjoint.body.body.fields[1].fields)
    # y_i's adjoint is ones * dy_i: use dy_i itself
    for i, dy in enumerate(dys):
        var = by_name.get(f"{OUT_PREFIX}_{i}_adjoint")
        if var is not None:
            producers[var] = dy
    forward_vars = _closure(outs, producers)
    backward_vars = _closure(grads, producers) - forward_vars
    order = {b.var: i for i, b in enumerate(bindings)}
    reads = []
    for var in sorted(backward_vars, key=order.get):
        reads.extend(_uses(producers[var]))
    reads.extend(g for g in grads if g not in backward_vars)  # a gradient that is a forward value
    reads = list(dict.fromkeys(reads))
    saved = [v for v in reads if v in forward_vars or v in inputs]
    used_weights = [w for w in weights if w in reads]

    # forward: original bindings, returning the outputs and the saved values
    fwd_bindings = [relax.VarBinding(b.var, b.value) for b in bindings if b.var in forward_vars]
    returned = []
    for k, value in enumerate(outs + saved):
        if isinstance(value, relax.DataflowVar):
            var = relax.Var(f"tvm_buda_ret_{k}", value.ty)
            fwd_bindings.append(relax.VarBinding(var, value))
            value = var
        returned.append(value)
    forward = relax.Function(inputs + weights, relax.SeqExpr([relax.DataflowBlock(fwd_bindings)], relax.Tuple(returned)),
                             relax.TupleType([v.ty for v in returned]))
    # backward: saved values arrive as parameters
    saved_params, bwd_bindings = [], []
    for k, value in enumerate(saved):
        if isinstance(value, relax.DataflowVar):
            param = relax.Var(f"tvm_buda_saved_{k}", value.ty)
            bwd_bindings.append(relax.VarBinding(value, param))
        else:
            param = value
        saved_params.append(param)
    bwd_bindings += [relax.VarBinding(b.var, producers[b.var]) for b in bindings if b.var in backward_vars]
    grad_values = []
    for k, g in enumerate(grads):
        if isinstance(g, relax.DataflowVar):  # only non-dataflow vars may leave the block
            var = relax.Var(f"tvm_buda_grad_{k}", g.ty)
            bwd_bindings.append(relax.VarBinding(var, g))
            g = var
        grad_values.append(g)
    backward = relax.Function(dys + saved_params + used_weights,
                              relax.SeqExpr([relax.DataflowBlock(bwd_bindings)], relax.Tuple(grad_values)),
                              relax.TupleType([g.ty for g in grad_values]))
    saved_specs = [(p.name, tuple(int(d) for d in p.ty.shape), str(p.ty.dtype)) for p in saved_params]
    return forward, backward, saved_specs, used_weights


def _before_autodiff(main: relax.Function) -> relax.Function:
    """Rewrites that give ops without a registered gradient a form that has one: PyTorch's
    x.max(dim) arrives as topk(k=1), whose values are a max reduction; TVM's conv2d gradient
    takes NCHW data and OIHW kernels only, so TFLite's NHWC convolutions get transposes around
    them (exact: layout changes move values, they do not round them). PyTorch's safe-softmax guard
    gets its device form first: rewritten after autodiff, the forward would still compute the old
    int8 form on the host for the backward's saved copy of it."""
    from relay_passes.safe_softmax_guard import SimplifySafeSoftmaxGuard
    from relay_passes.top_one_as_max import TopOneAsMax

    mod = SimplifySafeSoftmaxGuard()(TopOneAsMax()(tvm.IRModule({"main": main})))
    mod = relax.transform.ConvertLayout({"relax.nn.conv2d": ["NCHW", "OIHW"]})(mod)
    mod = relax.transform.DeadCodeElimination()(mod)
    return mod["main"]


def training_graphs(main: relax.Function, num_inputs: int, trainable: list[str]) -> TrainingGraphs:
    """Differentiate `main` with respect to the parameters (weights or inputs) named in `trainable`."""
    target = vjp_target(_before_autodiff(main), num_inputs)
    num_outputs = len(_tensor_fields(main.ret_ty))
    candidates = {p.name: p for p in target.params[:num_inputs] + target.params[num_inputs + num_outputs:]}
    unknown = sorted(set(trainable) - set(candidates))
    if unknown:
        raise KeyError(f"training: no weight(s) {unknown} in the graph; weights are {sorted(candidates)}")
    require = [candidates[n] for n in trainable]
    if not require:
        raise ValueError("training: nothing requires a gradient (the module has no trainable parameters)")
    mod = relax.transform.Gradient("main", require_grads=require)(tvm.IRModule({"main": target}))
    forward, backward, saved, used_weights = split_adjoint(mod["main_adjoint"], num_inputs, num_outputs)
    n_bwd_inputs = num_outputs + len(saved)
    fwd_mod = relax.transform.Normalize()(tvm.IRModule({"main": forward.with_attrs({"num_input": num_inputs, "global_symbol": "main"})}))
    bwd_mod = relax.transform.Normalize()(tvm.IRModule({"main": backward.with_attrs({"num_input": n_bwd_inputs, "global_symbol": "main"})}))
    return TrainingGraphs(fwd_mod, bwd_mod, num_outputs, saved, list(trainable))
