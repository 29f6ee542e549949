"""Which weights of a framework model train, and writing trained values back into the model.

PyTorch: the exported program's signature maps each graph input to the torch parameter it holds
(`p_a_b_weight` -> `a.b.weight`); the parameters with requires_grad=True train, and `write_back` copies trained values into the
torch.nn.Module so `model.state_dict()` is the result. TensorFlow/Keras: the trainable variables,
recovered from the TFLite import's constants (keras_weights), train and are assigned back. Other
frameworks: every float weight the importer kept as a graph parameter trains; their models are
not written back (yet).
"""

from __future__ import annotations

import numpy as np

from .trainable import TrainableModel


def import_torch_for_training(torch_module, sample_inputs, name: str):
    """(ImportedModel, {graph parameter name: torch parameter name} for parameters requiring grad)."""
    from ..frontends.pytorch import export, import_exported_program

    program = export(torch_module, sample_inputs, name)
    imported = import_exported_program(program, name)
    requires = {n for n, p in torch_module.named_parameters() if p.requires_grad}
    names = {graph: fqn for graph, fqn in program.graph_signature.inputs_to_parameters.items() if fqn in requires}
    missing = sorted(set(names) - set(imported.params))
    if missing:
        raise KeyError(f"training: graph parameter(s) {missing} not found after import; graph parameters are "
                       f"{sorted(imported.params)}")
    return imported, names


def compile_for_training(module, sample_inputs, config, input_grad_count: int = 0) -> TrainableModel:
    """Import a framework module and compile its forward and backward for the device."""
    write_back = None
    if module.framework == "pytorch":
        imported, names = import_torch_for_training(module.framework_module, sample_inputs, module.name)
        # The parameters are looked up once, as torch.optim holds its parameters (walking the module
        # tree every step cost ~0.3 ms of a small BERT's training step).
        targets, views = dict(module.framework_module.named_parameters()), {}
        write_back = lambda values: _write_torch(targets, names, values, views)  # noqa: E731
    elif module.framework == "tensorflow" and hasattr(module.framework_module, "trainable_variables"):
        from .keras_weights import import_tf_for_training

        imported, names, write_back = import_tf_for_training(module.framework_module, sample_inputs, module.name,
                                                             module.import_model)
    else:
        imported = module.import_model(sample_inputs, module.name)
        names = {k: k for k, v in imported.params.items() if np.asarray(v).dtype.kind == "f"}
    model = TrainableModel(imported, list(names), config, input_grad_count=input_grad_count)
    model.framework_names = names
    model.write_back = write_back
    return model


def _write_torch(params: dict, names: dict, values: dict, views: dict) -> None:
    """Copy trained values into the torch parameters `params` ({torch name: parameter}). A float32
    CPU parameter is written through a numpy view of its memory (`views` keeps them, keyed by
    graph name with the storage address they were taken at): ~1 us against ~5 us for torch's copy_."""
    import torch

    written = []
    try:
        for graph_name, value in values.items():
            if graph_name not in names:
                continue
            target = params[names[graph_name]]
            address, view = views.get(graph_name, (None, None))
            if address != target.data_ptr():     # first write, or the parameter got new storage
                address, view = views[graph_name] = (target.data_ptr(), _numpy_view(target))
            if view is None:
                with torch.no_grad():
                    target.copy_(torch.from_numpy(np.asarray(value, dtype=np.float32)).to(target.dtype))
            else:
                np.copyto(view, value, casting="same_kind")
                written.append(target)
    finally:
        if written:   # as in-place torch writes would (one call for all; also if a later write failed)
            torch.autograd.graph.increment_version(written)


def _numpy_view(param):
    """A writable numpy array sharing a float32 CPU parameter's memory, else None."""
    import torch

    if param.dtype != torch.float32 or param.device.type != "cpu" or not param.is_contiguous():
        return None
    return param.detach().numpy()
