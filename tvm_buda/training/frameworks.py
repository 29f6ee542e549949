"""Which weights of a framework model train, and writing trained values back into the model.

PyTorch: torch.export names a parameter `a.b.weight` as the graph input `p_a_b_weight`; the
parameters with requires_grad=True train, and `write_back` copies trained values into the
torch.nn.Module so `model.state_dict()` is the result. Other frameworks: every float weight the
importer kept as a graph parameter trains; their models are not written back (yet).
"""

from __future__ import annotations

import numpy as np

from .trainable import TrainableModel


def torch_parameter_names(torch_module, graph_params: dict) -> dict[str, str]:
    """Graph parameter name -> torch parameter name, for the parameters that require grad."""
    out = {}
    for name, param in torch_module.named_parameters():
        graph_name = "p_" + name.replace(".", "_")
        if graph_name not in graph_params:
            raise KeyError(f"training: torch parameter {name!r} has no graph parameter {graph_name!r} "
                           f"(graph parameters: {sorted(graph_params)})")
        if param.requires_grad:
            out[graph_name] = name
    return out


def compile_for_training(module, sample_inputs, config, input_grad_count: int = 0) -> TrainableModel:
    """Import a framework module and compile its forward and backward for the device."""
    imported = module.import_model(sample_inputs, module.name)
    if module.framework == "pytorch":
        names = torch_parameter_names(module.framework_module, imported.params)
    else:
        names = {k: k for k, v in imported.params.items() if np.asarray(v).dtype.kind == "f"}
    model = TrainableModel(imported, list(names), config, input_grad_count=input_grad_count)
    model.framework_names = names
    if module.framework == "pytorch":
        model.write_back = lambda values: _write_torch(module.framework_module, names, values)
    return model


def _write_torch(torch_module, names: dict, values: dict) -> None:
    import torch

    params = dict(torch_module.named_parameters())
    with torch.no_grad():
        for graph_name, value in values.items():
            if graph_name in names:
                target = params[names[graph_name]]
                target.copy_(torch.from_numpy(np.asarray(value, dtype=np.float32)).to(target.dtype))
