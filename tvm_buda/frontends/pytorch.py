"""PyTorch -> Relax through torch.export and TVM's exported-program importer."""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path

import numpy as np

from .errors import MalformedModelFile, import_failed
from . import torch_converters
from .. import host_vm
from .imported import ImportedModel, TensorSpec, split_samples

ROUTE = "torch.export -> TVM's exported-program importer (tvm.relax.frontend.torch.from_exported_program)"


def export(module, sample_inputs, name: str):
    """torch.export the module in eval mode; a lone dict of samples is passed as keyword arguments."""
    import torch

    args, kwargs = split_samples(sample_inputs)
    args = tuple(torch.as_tensor(x) if not isinstance(x, torch.Tensor) else x for x in args)
    kwargs = {k: torch.as_tensor(v) if not isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    try:
        module.eval()
    except NotImplementedError:  # the module of a loaded exported program is already in eval form
        pass
    from torch.nn.attention import SDPBackend, sdpa_kernel

    try:
        # the math backend's output strides are the ones the later decomposition produces; traced with
        # another backend, a view after attention (GPT-2 at batch > 1) fails in TVM's importer
        with torch.no_grad(), sdpa_kernel([SDPBackend.MATH]), exportable_configs(module, kwargs):
            return torch.export.export(module, args, kwargs)
    except Exception as exc:  # noqa: BLE001 - re-raise with the route named
        raise import_failed("pytorch", name, "torch.export (tracing the model)", exc) from exc


@contextlib.contextmanager
def exportable_configs(module, kwargs):
    """transformers settings that torch.export or TVM's importer cannot take, changed while the
    module is traced and put back after; both leave the model's math as it is.

    - use_cache: configs default to True, and a model then returns its key/value cache (a
      DynamicCache, which torch.export cannot return) beside what the user wants (OPT and GPT-Neo
      classification). Unless the samples pass use_cache, it is False while traced.
    - The experts of a mixture-of-experts layer (Mixtral, Qwen2-MoE, OLMoE, ...): transformers 5 runs
      them as a grouped GEMM by default, through its own operator and `histc` (tokens per expert),
      which no importer knows. "batched_mm", transformers' other static-shape implementation (each
      token's experts' weights gathered, then batched GEMMs), computes the same with ops TVM imports.
    """
    configs = list({id(c): c for c in (getattr(m, "config", None) for m in module.modules())
                    if c is not None}.values())
    cached = [] if "use_cache" in kwargs else [c for c in configs if getattr(c, "use_cache", None) is True]
    expert_configs = {id(m.config): m.config for m in module.modules()      # transformers' experts modules
                      if hasattr(m, "_is_expert_parallel") and getattr(m, "config", None) is not None}
    experts = [(c, c._experts_implementation) for c in expert_configs.values()
               if c._experts_implementation != "batched_mm"]
    for config in cached:
        config.use_cache = False
    for config, _ in experts:
        config._experts_implementation = "batched_mm"
    try:
        yield
    finally:
        for config in cached:
            config.use_cache = True
        for config, implementation in experts:
            config._experts_implementation = implementation


def load_exported_program(path, sample_inputs, name: str):
    """A .pt2 file from torch.export.save; re-exported with the sample shapes if it has dynamic dims."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise MalformedModelFile(f"{path}: no such exported-program file")
    try:
        program = torch.export.load(str(path))
    except Exception as exc:  # noqa: BLE001 - torch raises several types for bad archives
        raise MalformedModelFile(f"{path}: not an exported program saved by torch.export.save ({exc})") from exc
    args, kwargs = split_samples(sample_inputs)
    if (args or kwargs) and _has_dynamic_dims(program):
        return export(program.module(), sample_inputs, name)
    return program


def _has_dynamic_dims(program) -> bool:
    import torch

    return any(isinstance(d, torch.SymInt) for spec in user_input_values(program) for d in spec.shape)


def user_input_values(program) -> list:
    """Fake tensors of the user inputs, in the order the exported program takes them."""
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    return [placeholders[name].meta["val"] for name in program.graph_signature.user_inputs]


def import_exported_program(program, name: str) -> ImportedModel:
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    try:
        with warnings.catch_warnings():
            # torch 2.13's own run_decompositions deep-copies its tree specs and warns about
            # `isinstance(treespec, LeafSpec)` in its own code: nothing a user can act on
            warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\)", category=FutureWarning)
            mod = from_exported_program(program, keep_params_as_input=True, unwrap_unit_return_tuple=True,
                                        custom_convert_map=torch_converters.converters())
    except Exception as exc:  # noqa: BLE001
        raise import_failed("pytorch", name, ROUTE, exc) from exc
    mod, detached = relax.frontend.detach_params(mod)
    main = mod["main"]
    values = user_input_values(program)
    weight_vars = main.params[len(values):]
    # numpy views of TVM's own (aligned) buffers, which are the framework's (DLPack): the VM and a
    # Float16_b device weight of a bfloat16 model later share them instead of copying
    params = {v.name: host_vm.to_numpy(t) for v, t in zip(weight_vars, detached.get("main", []))}
    specs = [TensorSpec(v.name, tuple(int(d) for d in x.shape), str(x.dtype).removeprefix("torch."))
             for v, x in zip(main.params, values)]
    structure, names = _output_layout(program.call_spec.out_spec)
    return ImportedModel(name, "pytorch", mod, params, specs, structure, names)


def _output_layout(spec) -> tuple[str, list[str]]:
    """single / tuple / dict from the exported program's output tree (nested trees come back flat)."""
    if spec is None or spec.is_leaf():
        return "single", []
    if spec.type is dict and all(c.is_leaf() for c in spec.children()):
        return "dict", [str(k) for k in spec.context]
    if spec.type in (tuple, list) or spec.num_leaves > 1:
        return "tuple", []
    return "single", []  # e.g. a transformers ModelOutput holding one tensor


def import_pytorch(module, sample_inputs, name: str) -> ImportedModel:
    return import_exported_program(export(module, sample_inputs, name), name)


def import_pt2(path, sample_inputs, name: str) -> ImportedModel:
    return import_exported_program(load_exported_program(path, sample_inputs, name), name)
