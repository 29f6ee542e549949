"""Small edits to an imported `main`: user-facing input names, output order, no duplicate weights."""

from __future__ import annotations

import re

import tvm
from tvm import relax


def sanitize(name: str) -> str:
    """A name usable as a Relax/Python identifier (frontends hand us 'serving_default_x:0', 'input.1')."""
    name = re.sub(r"\W", "_", name)
    return name if name and not name[0].isdigit() else f"_{name}"


def rename_inputs(mod: tvm.IRModule, names: list[str]) -> tvm.IRModule:
    """Rename main's first len(names) parameters (the runtime inputs)."""
    main = mod["main"]
    old = list(main.params[: len(names)])
    new = [relax.Var(sanitize(n), v.ty) for n, v in zip(names, old)]
    if [v.name for v in old] == [v.name for v in new]:
        return mod
    bound = main.bind_params(dict(zip(old, new)))  # drops the old parameters, body now uses `new`
    func = relax.Function(new + list(bound.params), bound.body, main.ret_ty, main.is_pure, main.attrs)
    return _replace_main(mod, func)


def reorder_outputs(mod: tvm.IRModule, order: list[int]) -> tvm.IRModule:
    """Make main return its tuple fields in `order` (frontends may emit outputs in their own order)."""
    main = mod["main"]
    if order == list(range(len(order))):
        return mod
    ret_ty = relax.TupleType([main.ret_ty.fields[i] for i in order])
    outputs = relax.Var("outputs", main.ret_ty)
    result = relax.Var("reordered", ret_ty)
    fields = [relax.TupleGetItem(outputs, i) for i in order]
    blocks = list(main.body.blocks) + [relax.BindingBlock([
        relax.VarBinding(outputs, main.body.body), relax.VarBinding(result, relax.Tuple(fields))])]
    func = relax.Function(main.params, relax.SeqExpr(blocks, result), ret_ty, main.is_pure, main.attrs)
    return _replace_main(mod, func)


def drop_params_attr(mod: tvm.IRModule) -> tvm.IRModule:
    """The TFLite importer keeps a second copy of every weight in main's "params" attribute."""
    main = mod["main"]
    if main.attrs is None or "params" not in main.attrs:
        return mod
    return _replace_main(mod, main.without_attr("params"))


def num_outputs(mod: tvm.IRModule) -> int:
    ret = mod["main"].ret_ty
    return len(ret.fields) if isinstance(ret, relax.TupleType) else 1


def _replace_main(mod: tvm.IRModule, func: relax.Function) -> tvm.IRModule:
    mod = mod.shallow_copy() if hasattr(mod, "shallow_copy") else tvm.IRModule(dict(mod.functions.items()))
    mod["main"] = func
    return relax.transform.Normalize()(mod)
