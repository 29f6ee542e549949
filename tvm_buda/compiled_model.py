"""CompiledModel: a model compiled for the buda backend, ready to run on the simulator."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from buda_runtime_sim import context
from buda_runtime_sim.config import CompilerConfig, _get_global_compiler_config
from buda_runtime_sim.framework_tensors import to_framework

from . import host_vm
from .device_runtime import linked
from .frontends.imported import ImportedModel, to_numpy
from .input_checks import check_indices
from .partition_summary import PartitionSummary

# What each frontend's users get back (ONNX, TFLite and plain Relax users get numpy).
OUTPUT_FRAMEWORK = {"pytorch": "pytorch", "tensorflow": "tensorflow", "jax": "jax"}
# perf_report(training=True) compiles the model's training graphs, and tvm_buda.training builds
# CompiledModels to do it: it sits above this module, so tvm_buda/__init__ hands its estimator in
# (set_training_perf) instead of this module importing it.
_training_perf = {"estimate": None}


def set_training_perf(estimate) -> None:
    """`estimate(compiled, device_config, microbatch, optimizer, **placement)` -> a training-step report."""
    _training_perf["estimate"] = estimate


class CompiledModel:
    """Runs a compiled model: host parts in the Relax VM, device subgraphs on the simulator.

    signature: the ImportedModel (its inputs, outputs and weights; `mod` may be None on a warm
    cache hit). weight_names: main's weight parameters in call order. subgraphs: list of
    (DeviceSubgraph, ModuleGraph).
    """

    def __init__(self, signature: ImportedModel, executable, weight_names: list[str], subgraphs: list,
                 summary: PartitionSummary, config: CompilerConfig, cache_key: str | None = None,
                 index_limits: dict | None = None):
        self.name = signature.name
        self.framework = signature.framework
        self.imported = signature
        self.executable = executable
        self.subgraphs = subgraphs
        self.summary = summary
        self.config = config
        self.cache_key = cache_key
        self.index_limits = dict(index_limits or {})
        self.weight_names = list(weight_names)
        self._weight_set = frozenset(self.weight_names)
        self._weight_index = {n: i for i, n in enumerate(self.weight_names)}
        # each subgraph's weights: (name in its module, name in the host graph), for update_parameters
        self._parameter_roles = [(sub, [(local, source) for kind, local, source in sub.arg_roles if kind == "parameter"])
                                 for sub, _ in subgraphs]
        with linked([subgraph for subgraph, _ in subgraphs]):
            self.vm = host_vm.VirtualMachine(host_vm.runnable(executable))
        self._main = self.vm["main"]
        self._weights = [_vm_tensor(signature.params[n]) for n in weight_names]
        self.exec_context = context.ExecutionContext(numerics=config.numerics(), check_finite=config.check_finite)
        self._run_lock = threading.RLock()

    # ---- running ----------------------------------------------------------------------------
    def run(self, *inputs, **named_inputs):
        """Run on the simulator; inputs and outputs in the model's framework (torch for PyTorch).

        Keyword inputs are matched to the model's input names."""
        framework = OUTPUT_FRAMEWORK.get(self.framework, "numpy")
        # numpy outputs are copied to DLPack-aligned memory: fed back to a VM, TVM then takes them
        # without another copy
        return self.imported.pack_outputs(self._run_vm(
            inputs, named_inputs, lambda o: aligned_copy(o) if framework == "numpy" else to_framework(o, framework)))

    __call__ = run

    def run_uncopied(self, *inputs) -> list[np.ndarray]:
        """The flat outputs as numpy views of the VM's memory, not copied (a training step's saved
        values, which only the backward program reads). The VM never reuses memory a view holds,
        but a view may share memory with an input or a weight of this call: callers only read them."""
        return self._run_vm(inputs, {}, None)

    def _run_vm(self, inputs, named_inputs, convert) -> list:
        arrays = self.imported.bind_inputs(inputs, named_inputs)
        if self.index_limits:
            check_indices(self.name, {s.name: a for s, a in zip(self.imported.inputs, arrays)}, self.index_limits)
        args = [_vm_tensor(a) for a in arrays]
        with self._run_lock, context.use(self.exec_context):  # a Relax VM runs one call at a time
            outputs = _flatten(self._main(*args, *self._weights))
            return outputs if convert is None else [convert(o) for o in outputs]

    def explain(self, *inputs, golden=None):
        """A per-op report of a run on `inputs` (tvm_buda.explain_report.Explanation): every op in
        execution order, device or host, shapes and formats, each device op's output against the same
        program in float32 and the first that departs; the outputs against `golden` (the framework's
        outputs) when given. Without inputs: the ops alone, formats as the configuration resolves them."""
        from .explain import explain_compiled

        return explain_compiled(self, inputs or None, golden)

    def reload_generated_modules(self) -> None:
        """Re-import every generated module now (picks up hand edits)."""
        with self._run_lock:
            for subgraph, _ in self.subgraphs:
                subgraph.reload()

    # ---- weights ----------------------------------------------------------------------------
    def parameters(self) -> dict[str, np.ndarray]:
        """Current weights, by their name in the compiled graph."""
        return {name: self.imported.params[name] for name in self.weight_names}

    def update_parameters(self, values: dict, shared_copies: dict | None = None, vm_ready_values: bool = False) -> None:
        """Replace weights by name, on the host side and in every generated module that holds them.

        shared_copies: a dict the caller passes to several models given the same `values` (a
        training model's forward and backward): each weight's device copies are converted once for
        all of them (Parameter.set_value). vm_ready_values: the caller made every array vm_ready
        (a training step's weights), so TVM is handed them without checking each again."""
        unknown = sorted(set(values) - self._weight_set)
        if unknown:
            raise KeyError(f"{self.name}: no parameter(s) {unknown}; parameters are {self.weight_names}")
        baked = sorted(set(values) & set(self.summary.baked_weights))
        if baked:
            raise ValueError(f"{self.name}: parameter(s) {baked} were folded into constants at compile time "
                             "(inference batch norm into the convolution before it), so a new value cannot reach "
                             "the device; compile the model again with the new weights")
        params = self.imported.params
        arrays = {k: to_numpy(v) for k, v in values.items()}
        for name, array in arrays.items():  # all checked before any is replaced
            current = params[name]
            if array.shape != current.shape:
                raise ValueError(f"{self.name}: parameter {name} has shape {current.shape}, got {array.shape}")
        with self._run_lock:  # not while another thread runs the model
            to_vm = _ready_vm_tensor if vm_ready_values else _vm_tensor
            index = self._weight_index
            for name, array in arrays.items():  # only the changed weights (training updates every step)
                params[name] = host = array.astype(params[name].dtype, copy=False)
                self._weights[index[name]] = to_vm(host)
            for subgraph, roles in self._parameter_roles:
                mine = [(local, arrays[source]) for local, source in roles if source in arrays]
                if mine:
                    module = subgraph.module   # (checks its files on disk: once, not per weight)
                    for local, array in mine:
                        copies = None if shared_copies is None else shared_copies.setdefault(id(array), ({}, array))[0]
                        module.get_parameter(local).set_value(array, device_copies=copies)

    # ---- what went where --------------------------------------------------------------------
    def device_ops(self) -> list[str]:
        """Relax op names that run on the device, in generated-code order."""
        return list(self.summary.device_ops)

    def cpu_ops(self) -> list[str]:
        """Relax op names left on the host (compiled by TVM for LLVM)."""
        return list(self.summary.cpu_ops)

    def partition_summary(self) -> PartitionSummary:
        return self.summary

    def perf_report(self, device_config: str | None = None, microbatch: int | None = None, training: bool = False,
                    optimizer=None, **placement):
        """Estimated cycles, placement and samples/s on a board (see tvm_buda.perf_report). With
        training=True: one training step, forward + backward + `optimizer` (tvm_buda.training.perf)."""
        if training:
            return _training_perf["estimate"](self, device_config, microbatch, optimizer, **placement)
        from .perf_report import perf_report

        return perf_report(self, device_config, microbatch, **placement)

    @property
    def generated_files(self) -> list[Path]:
        return [path for subgraph, _ in self.subgraphs for path in subgraph.files.all()]

    @property
    def num_device_subgraphs(self) -> int:
        return len(self.subgraphs)

    @property
    def graph_breaks(self) -> int:
        return self.summary.graph_breaks

    def __repr__(self) -> str:
        return (f"CompiledModel({self.name!r}, framework={self.framework}, device_subgraphs={self.num_device_subgraphs}, "
                f"device_ops={len(self.device_ops())}, cpu_ops={len(self.cpu_ops())}, graph_breaks={self.graph_breaks})")


# TVM takes a numpy array's memory without a copy only when it is 64-byte aligned (a refused
# from_dlpack plus tvm.runtime.tensor costs ~30 us, a numpy copy into an aligned buffer ~1 us).
_DLPACK_ALIGNMENT = 64


def vm_ready(array) -> np.ndarray:
    """`array` itself when TVM takes its memory without a copy (C-contiguous, writable, 64-byte
    aligned), else an aligned copy of it."""
    array = np.asarray(array)
    if not (array.flags.c_contiguous and array.flags.writeable) or array.ctypes.data % _DLPACK_ALIGNMENT:
        array = aligned_copy(array)
    return array


def _vm_tensor(array: np.ndarray):
    """A TVM tensor sharing `array`'s memory when TVM accepts it (64-byte aligned, writable), else
    sharing an aligned numpy copy of it."""
    array = vm_ready(array)
    try:
        return host_vm.from_dlpack(array)
    except Exception:  # noqa: BLE001 - dtypes DLPack cannot carry are copied by TVM
        return host_vm.copied(array)


def _ready_vm_tensor(array: np.ndarray):
    """_vm_tensor for an array already vm_ready (its alignment check costs ~2 us: numpy's ctypes)."""
    try:
        return host_vm.from_dlpack(array)
    except Exception:  # noqa: BLE001 - not what the caller promised after all: the checked path
        return _vm_tensor(array)


def aligned_copy(array: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of `array` (0-d stays 0-d) whose data starts on a DLPack-aligned address."""
    buffer = np.empty(array.nbytes + _DLPACK_ALIGNMENT, np.uint8)
    offset = -buffer.ctypes.data % _DLPACK_ALIGNMENT
    out = buffer[offset:offset + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


_TENSOR = host_vm.Tensor


def _flatten(result) -> list[np.ndarray]:
    """The VM's outputs as numpy views of its memory (each view keeps its memory alive). A tuple is
    read with one slice (iterating a TVM Array costs a length and an index check per item, ~1.5 us)."""
    if isinstance(result, _TENSOR):
        return [_host_view(result)]
    out = []
    for item in result[:]:
        if isinstance(item, _TENSOR):
            out.append(_host_view(item))
        else:
            out.extend(_flatten(item))
    return out


def _host_view(tensor) -> np.ndarray:
    try:
        return host_vm.to_numpy(tensor)   # a view: ~0.2 us, against ~8 us for tensor.numpy()
    except Exception:  # noqa: BLE001 - dtypes numpy cannot take by DLPack are copied by TVM
        return tensor.numpy()


def resolve_config(config: CompilerConfig | None) -> CompilerConfig:
    return (config or _get_global_compiler_config()).copy()
