"""MergeAdjacentPrograms: device functions called one after another become one device program.

MergeCompositeFunctions groups device ops by dataflow, so parts of a graph that do not feed each
other stay separate device functions even where nothing runs on the host between them: a
training backward's classifier and pooler gradients, or a layer norm's weight gradients beside
the input gradient that reads the same tensors. Each device function is one program call at run
time (~20 us alone, several times that inside a training step: inputs converted, generated files
checked, outputs copied), so runs of independent calls with no host op between them are merged:
the merged function takes every input of the run once and returns all their outputs. Calls that
depend on each other are left to MergeCompositeFunctions (a dependency means a host op between,
or a group it chose not to merge).
"""

from __future__ import annotations

import tvm
from tvm import relax

from .codegen_pass import buda_functions


def _mergeable(value, device: dict) -> bool:
    """A call of a device function whose arguments are tensors of `main` or constants (which stay
    arguments of the merged function)."""
    return (isinstance(value, relax.Call) and value.op in device
            and all(isinstance(a, (relax.Var, tvm.ir.Constant)) for a in value.args))


def _runs(device: dict, bindings) -> list[list[int]]:
    """Indices of the device calls in each run of two or more mergeable calls."""
    runs, current, produced = [], [], set()
    for i, binding in enumerate(bindings):
        value = binding.value
        mergeable = _mergeable(value, device)
        if mergeable and not any(a in produced for a in value.args):
            current.append(i)
            produced.add(binding.var)
            continue
        if isinstance(value, relax.TupleGetItem) and value.tuple_value in produced:
            produced.add(binding.var)             # an output of the run, read after it
            continue
        runs.append(current)
        current, produced = ([i], {binding.var}) if mergeable else ([], set())
    runs.append(current)
    return [r for r in runs if len(r) > 1]


def _merged_function(funcs, args_per_call):
    """One device function running `funcs` (called with `args_per_call`) side by side: (function,
    outputs per call as (first index, count) in its flat result tuple)."""
    params, param_of = [], {}
    for args in args_per_call:
        for arg in args:
            if arg not in param_of:           # a constant stays an argument, as the callee had it
                name = arg.name if isinstance(arg, relax.Var) else f"const_{len(params)}"
                param_of[arg] = relax.Var(name, arg.ty)
                params.append(param_of[arg])
    blocks, outputs, spans = [], [], []
    for func, args in zip(funcs, args_per_call):
        body = func.bind_params({p: param_of[a] for p, a in zip(func.params, args)}).body
        blocks.extend(body.blocks)
        result = body.body
        fields = list(result.fields) if isinstance(result, relax.Tuple) else [result]
        spans.append((len(outputs), len(fields) if isinstance(result, relax.Tuple) else None))
        outputs.extend(fields)
    ret = relax.TupleType([o.ty for o in outputs])
    merged = relax.Function(params, relax.SeqExpr(blocks, relax.Tuple(outputs)), ret, attrs=funcs[0].attrs)
    return merged, spans


def _merge_run(builder: relax.BlockBuilder, mod: tvm.IRModule, calls) -> list:
    """Bindings replacing a run of device calls: one call of the merged function, then each old
    call's variable bound to its outputs in the merged result."""
    args_per_call = [list(b.value.args) for b in calls]
    merged, spans = _merged_function([mod[b.value.op] for b in calls], args_per_call)
    gv = builder.add_func(merged, calls[0].value.op.name_hint)
    outer_args = list(dict.fromkeys(a for args in args_per_call for a in args))   # the merged params' order
    result = relax.Var(f"{calls[0].var.name}_merged", merged.ret_ty)
    new = [relax.VarBinding(result, relax.Call(gv, outer_args))]
    for b, (first, count) in zip(calls, spans):
        value = relax.TupleGetItem(result, first) if count is None else \
            relax.Tuple([relax.TupleGetItem(result, first + j) for j in range(count)])
        new.append(relax.VarBinding(b.var, value))
    return new


@tvm.transform.module_pass(opt_level=0, name="MergeAdjacentPrograms")
def merge_adjacent_programs(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
    main = mod["main"]
    if not isinstance(main.body, relax.SeqExpr):
        return mod
    builder, blocks, dropped, device = relax.BlockBuilder(mod), [], set(), buda_functions(mod)
    for block in main.body.blocks:
        bindings = list(block.bindings)
        replace = {}
        for run in _runs(device, bindings):
            calls = [bindings[i] for i in run]
            replace.update({i: [] for i in run[1:]})
            replace[run[0]] = _merge_run(builder, mod, calls)
            dropped.update(b.value.op for b in calls)
        if not replace:
            blocks.append(block)
            continue
        out = [new for i, binding in enumerate(bindings) for new in replace.get(i, [binding])]
        blocks.append(relax.DataflowBlock(out) if isinstance(block, relax.DataflowBlock) else relax.BindingBlock(out))
    if not dropped:
        return mod
    builder.update_func(mod.get_global_var("main"), relax.Function(
        main.params, relax.SeqExpr(blocks, main.body.body), main.ret_ty, main.is_pure, main.attrs, main.span))
    mod = builder.get()
    for gv in dropped:
        del mod[gv]
    return relax.transform.Normalize()(mod)
