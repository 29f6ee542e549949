"""TrainableModel: an imported model compiled twice for the device, forward and backward.

The runtime (buda_runtime_sim.runtime.training) drives it without importing TVM: `forward`
returns the outputs and what backward needs; `backward` turns output gradients into parameter
(and, when asked, input) gradients. Both halves are partitioned and code-generated like any
model, so they run on the simulator in device formats with host fallback where needed.
"""

from __future__ import annotations

import numpy as np
from tvm import relax

from buda_runtime_sim.config import CompilerConfig
from buda_runtime_sim.runtime.flat_values import owner_of

from ..builder import build_imported
from ..compiled_model import aligned_copy, vm_ready
from ..frontends.imported import ImportedModel, TensorSpec, to_numpy
from .autodiff import training_graphs
from .weight_copies import prefilled_copies


class TrainableModel:
    """With nothing to differentiate (frozen weights, no input gradient wanted) it is forward only."""

    def __init__(self, imported: ImportedModel, trainable: list[str], config: CompilerConfig,
                 input_grad_count: int = 0):
        self.name = imported.name
        self.inputs = list(imported.inputs)
        self.trainable = list(trainable)
        grad_inputs = [s.name for s in self.inputs[:input_grad_count] if "float" in s.dtype]
        self.grad_inputs = grad_inputs
        self.params = imported.params  # shared with the caller's ImportedModel: one copy of the weights
        self.framework_names = {n: n for n in self.trainable}  # graph name -> the framework's name
        self.write_back = None  # callable(values by graph name): copy trained values into the framework model
        self.backward_model = None
        self._copies: dict = {}   # weight name -> its current value's device copies (filled as programs ask)
        if not grad_inputs and not self.trainable:
            self.forward_model = build_imported(imported, config)
            self.num_outputs = len(imported.mod["main"].ret_ty.fields) \
                if isinstance(imported.mod["main"].ret_ty, relax.TupleType) else 1
            return
        graphs = training_graphs(imported.mod["main"], len(self.inputs), grad_inputs + self.trainable)
        self.num_outputs = graphs.num_outputs
        fwd = ImportedModel(f"{imported.name}_fwd", "relax", graphs.forward, self.params, self.inputs, "tuple")
        main = graphs.backward["main"]
        n_bwd_inputs = self.num_outputs + len(graphs.saved)
        bwd_inputs = [TensorSpec(p.name, tuple(int(d) for d in p.ty.shape), str(p.ty.dtype))
                      for p in main.params[:n_bwd_inputs]]
        bwd = ImportedModel(f"{imported.name}_bwd", "relax", graphs.backward,
                            {p.name: self.params[p.name] for p in main.params[n_bwd_inputs:]}, bwd_inputs, "tuple")
        self.forward_model = build_imported(fwd, config, fold_weights=False)   # weights change every step
        self.backward_model = build_imported(bwd, config, fold_weights=False)
        self.output_specs = bwd_inputs[:self.num_outputs]

    def forward(self, *inputs) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(outputs, saved): run the forward graph on the device. The saved values are the VM's own
        memory, uncopied: only the backward program reads them."""
        results = self.forward_model.run_uncopied(*inputs)
        return [aligned_copy(r) for r in results[:self.num_outputs]], results[self.num_outputs:]

    def backward(self, saved: list[np.ndarray], output_grads: list) -> tuple[dict, dict]:
        """(parameter gradients, input gradients) by name, for one forward's saved values."""
        if self.backward_model is None:
            return {}, {}
        dys = []
        for spec, g in zip(self.output_specs, output_grads):
            g = np.asarray(g, dtype=np.float32)
            if g.shape != spec.shape:
                raise ValueError(f"{self.name}: gradient of output has shape {g.shape}, expected {spec.shape}")
            dys.append(g)
        # uncopied: the trainer copies parameter gradients as it accumulates them
        grads = dict(zip(self.grad_inputs + self.trainable, self.backward_model.run_uncopied(*dys, *saved)))
        return ({n: grads[n] for n in self.trainable}, {n: aligned_copy(grads[n]) for n in self.grad_inputs})

    def parameters(self) -> dict[str, np.ndarray]:
        return self.forward_model.parameters()

    def update_parameters(self, values: dict) -> None:
        values = {k: to_numpy(v) for k, v in values.items()}
        owner = owner_of(values)   # an optimizer step's new weights: views of one flat buffer
        # float32 weights in memory TVM takes as it is: both models' VMs then share them uncopied
        # (an aligned flat buffer's views are aligned: only their flags are left to check)
        values = {k: v if owner is not None and owner.aligned and v.flags.writeable else _shareable(v)
                  for k, v in values.items()}
        # id(array) -> (device copies, the array: kept alive so ids stay unique)
        shared = {} if owner is None else prefilled_copies(owner, values, self._copies)
        self.forward_model.update_parameters(values, shared, vm_ready_values=True)
        backward_values = {k: v for k, v in values.items()
                           if self.backward_model is not None and k in self.backward_model.weight_names}
        if backward_values:
            self.backward_model.update_parameters(backward_values, shared, vm_ready_values=True)
        self._copies.update({k: shared[id(v)][0] for k, v in values.items() if id(v) in shared})

    def perf_reports(self, device_config=None):
        return [self.forward_model.perf_report(device_config), self.backward_model.perf_report(device_config)]


def _shareable(array: np.ndarray) -> np.ndarray:
    return vm_ready(array) if array.dtype == np.float32 else array
