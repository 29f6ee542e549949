"""buda as an ONNX backend (`onnx.backend.base.Backend`), so onnx's own backend tests run on it.

    import tvm_buda.onnx_backend as backend
    outputs = backend.run_model(model, [x])              # or backend.prepare(model).run([x])
    onnx.backend.test.BackendTest(backend, __name__)     # onnx's test runner against buda

The simulated device runs on the host, so ONNX's "CPU" device is buda here (the name onnx's
runner asks for); "BUDA" and "TT" are accepted too. A model is compiled on its first run, for the
shapes of the inputs it is given (onnx's light models leave the batch dim symbolic), and again for
new shapes. `config` (a CompilerConfig) sets formats and fidelity; onnx's tolerances (rtol 1e-3)
hold at Float32/HiFi4, PyBuda's default bfloat16 is judged by PyBuda's own rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DEVICES = ("CPU", "BUDA", "TT")


def _onnx_base():
    from onnx.backend import base

    return base


class BudaRep:
    """A prepared model: `run(inputs)` returns its outputs as a tuple of numpy arrays."""

    def __init__(self, model, config=None, name: str | None = None):
        self.model = model
        self.config = config
        self.name = name or (model.graph.name or "onnx_model")
        self._compiled: dict[tuple, Any] = {}

    def compiled_for(self, inputs: list[np.ndarray]):
        """The CompiledModel for these input shapes and dtypes (compiled on first use)."""
        from .model_compiler import compile_model
        from .modules import OnnxModule

        key = tuple((a.shape, str(a.dtype)) for a in inputs)
        if key not in self._compiled:
            self._compiled[key] = compile_model(OnnxModule(self.name, self.model), tuple(inputs), self.config)
        return self._compiled[key]

    def run(self, inputs, **kwargs) -> tuple:
        if isinstance(inputs, dict):
            inputs = [inputs[n] for n in _runtime_input_names(self.model)]
        elif not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        arrays = [np.asarray(a) for a in inputs]
        outputs = self.compiled_for(arrays).run(*arrays)
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        names = [o.name for o in self.model.graph.output]
        values = [np.asarray(o) for o in outputs]
        return _onnx_base().namedtupledict("Outputs", names)(*values) if len(names) == len(values) else tuple(values)


def _runtime_input_names(model) -> list[str]:
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def is_compatible(model, device: str = "CPU", **kwargs) -> bool:
    return supports_device(device)


def prepare(model, device: str = "CPU", config=None, **kwargs) -> BudaRep:
    """Check the model and return a rep that compiles it for buda on its first run.

    Extra keyword arguments onnx's runner passes (rtol, atol) are ignored."""
    import onnx

    if not supports_device(device):
        raise ValueError(f"buda ONNX backend: device {device!r} is not supported; use one of {DEVICES}")
    if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
        model = onnx.load(model)
    onnx.checker.check_model(model)
    return BudaRep(model, config)


def run_model(model, inputs, device: str = "CPU", **kwargs) -> tuple:
    return prepare(model, device, **kwargs).run(inputs)


def run_node(node, inputs, device: str = "CPU", outputs_info=None, **kwargs) -> tuple:
    """One node as a one-node model (inputs in order, outputs named as the node's)."""
    import onnx
    from onnx import helper

    arrays = [np.asarray(a) for a in inputs]
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                    for n, a in zip(node.input, arrays)]
    graph_outputs = [helper.make_empty_tensor_value_info(n) for n in node.output]
    opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
    model = helper.make_model(helper.make_graph([node], "node", graph_inputs, graph_outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
    return prepare(model, device).run(arrays)


def supports_device(device: str) -> bool:
    return str(device).upper().split(":")[0] in DEVICES


def backend_class():
    """An `onnx.backend.base.Backend` subclass with buda's prepare / run_model / run_node /
    supports_device (made on call: importing tvm_buda must not import onnx)."""
    base = _onnx_base()
    return type("BudaBackend", (base.Backend,), {
        "is_compatible": classmethod(lambda cls, model, device="CPU", **kw: is_compatible(model, device, **kw)),
        "prepare": classmethod(lambda cls, model, device="CPU", **kw: prepare(model, device, **kw)),
        "run_model": classmethod(lambda cls, model, inputs, device="CPU", **kw: run_model(model, inputs, device, **kw)),
        "run_node": classmethod(lambda cls, node, inputs, device="CPU", outputs_info=None, **kw:
                                run_node(node, inputs, device, outputs_info, **kw)),
        "supports_device": classmethod(lambda cls, device: supports_device(device)),
    })
