"""PyTorch -> Relax through torch.export and TVM's exported-program importer."""

from __future__ import annotations

from .imported import ImportedModel, TensorSpec


def _dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def import_pytorch(module, sample_inputs, name: str) -> ImportedModel:
    import torch
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    inputs = tuple(torch.as_tensor(x) if not isinstance(x, torch.Tensor) else x for x in sample_inputs)
    module = module.eval()
    try:
        with torch.no_grad():
            exported = torch.export.export(module, inputs)
    except Exception as exc:  # noqa: BLE001 - re-raise with the route named
        raise RuntimeError(f"PyTorch model '{name}' could not be traced by torch.export: {exc}") from exc
    try:
        mod = from_exported_program(exported, keep_params_as_input=True, unwrap_unit_return_tuple=True)
    except Exception as exc:  # noqa: BLE001
        raise RuntimeError(
            f"PyTorch model '{name}': TVM's exported-program importer (torch.export -> Relax) failed: {exc}"
        ) from exc
    mod, detached = relax.frontend.detach_params(mod)
    main = mod["main"]
    num_inputs = int(main.attrs["num_input"]) if main.attrs is not None and "num_input" in main.attrs else len(inputs)
    weight_vars = main.params[num_inputs:]
    params = {v.name: t.numpy() for v, t in zip(weight_vars, detached.get("main", []))}
    specs = [
        TensorSpec(v.name, tuple(int(d) for d in x.shape), _dtype_name(x))
        for v, x in zip(main.params[:num_inputs], inputs)
    ]
    with torch.no_grad():
        sample_out = module(*inputs)
    structure = "tuple" if isinstance(sample_out, (tuple, list)) else "single"
    return ImportedModel(name, "pytorch", mod, params, specs, structure)
