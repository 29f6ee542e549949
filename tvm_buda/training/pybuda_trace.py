"""A PyBudaModule as a Relax graph, so its parameters train like a framework model's.

The module's forward runs once under a tracing context: every `pybuda.op` call emits the Relax
op it stands for (the op table read backwards, for the ops a hand-written module commonly
uses) instead of computing. Parameters become weight parameters of `main`, named as in the module.
"""

from __future__ import annotations

import numpy as np
from tvm import relax

from buda_runtime_sim import context
from buda_runtime_sim.module import Constant, Parameter
from buda_runtime_sim.tensor import _to_numpy

from ..frontends.imported import ImportedModel, TensorSpec
from .trainable import TrainableModel


def _keep(reduce):
    return lambda x, a: reduce(x, [int(a["dim"])], keepdims=bool(a.get("keep_dim", True)))


def _transpose(x, a):
    axes = list(range(len(x.ty.shape)))
    d0, d1 = int(a["dim0"]) % len(axes), int(a["dim1"]) % len(axes)
    axes[d0], axes[d1] = axes[d1], axes[d0]
    return relax.op.permute_dims(x, axes)


def _matmul(*args):
    *operands, _attrs = args
    out = relax.op.matmul(operands[0], operands[1])
    return relax.op.add(out, operands[2]) if len(operands) > 2 else out


# PyBuda op -> Relax builder (operands..., attrs)
BUILDERS = {
    "Matmul": _matmul,
    "Add": lambda a, b, _: relax.op.add(a, b),
    "Subtract": lambda a, b, _: relax.op.subtract(a, b),
    "Multiply": lambda a, b, _: relax.op.multiply(a, b),
    "Divide": lambda a, b, _: relax.op.divide(a, b),
    "Max": lambda a, b, _: relax.op.maximum(a, b),
    "Min": lambda a, b, _: relax.op.minimum(a, b),
    "Relu": lambda x, a: relax.op.nn.relu(x),
    "Gelu": lambda x, a: relax.op.nn.gelu_tanh(x) if a.get("approximate") == "tanh" else relax.op.nn.gelu(x),
    "Sigmoid": lambda x, a: relax.op.sigmoid(x),
    "Tanh": lambda x, a: relax.op.tanh(x),
    "Exp": lambda x, a: relax.op.exp(x),
    "Log": lambda x, a: relax.op.log(x),
    "Sqrt": lambda x, a: relax.op.sqrt(x),
    "Abs": lambda x, a: relax.op.abs(x),
    "ReduceSum": _keep(relax.op.sum),
    "ReduceAvg": _keep(relax.op.mean),
    "ReduceMax": _keep(relax.op.max),
    "Transpose": _transpose,
    "Reshape": lambda x, a: relax.op.reshape(x, [int(d) for d in a["shape"]]),
    "Softmax": lambda x, a: relax.op.nn.softmax(x, int(a["dim"])),
    "LogSoftmax": lambda x, a: relax.op.nn.log_softmax(x, int(a["dim"])),
    "Layernorm": lambda x, g, b, a: relax.op.nn.layer_norm(x, g, b, [int(a.get("dim", -1))],
                                                           float(a.get("epsilon", 1e-5))),
}


class _Tracer:
    def __init__(self, bb: relax.BlockBuilder, parameters: dict):
        self.bb = bb
        self.parameters = parameters  # id(Parameter) -> relax.Var

    def _operand(self, x):
        if isinstance(x, relax.Expr):
            return x
        if isinstance(x, Parameter):
            return self.parameters[id(x)]
        value = x.value if isinstance(x, Constant) else _to_numpy(x)
        return relax.const(np.asarray(value, dtype=np.float32))

    def __call__(self, op_type, name, inputs, attrs):
        builder = BUILDERS.get(op_type)
        if builder is None:
            raise NotImplementedError(f"training a PyBudaModule: op {op_type} ({name!r}) has no Relax form yet; "
                                      f"supported: {sorted(BUILDERS)}")
        return self.bb.emit(builder(*[self._operand(x) for x in inputs], attrs), name_hint=name)


def trace_pybuda_module(module, sample_inputs) -> ImportedModel:
    """The module's forward at these input shapes as an ImportedModel (weights by parameter name)."""
    arrays = [np.asarray(_to_numpy(x), dtype=np.float32) for x in sample_inputs]
    specs = [TensorSpec(f"input_{i}", tuple(a.shape), "float32") for i, a in enumerate(arrays)]
    params = module.get_parameters()
    names = {id(p): p.get_name() for p in params}
    inputs = [relax.Var(s.name, relax.TensorType(s.shape, "float32")) for s in specs]
    weights = [relax.Var(names[id(p)], relax.TensorType(tuple(p.shape), "float32")) for p in params]
    bb = relax.BlockBuilder()
    with bb.function("main", inputs + weights, attrs={"num_input": len(inputs)}):
        with bb.dataflow():
            tracer = _Tracer(bb, {id(p): w for p, w in zip(params, weights)})
            ctx = context.ExecutionContext(tracer=tracer)
            with context.use(ctx):
                out = module(*inputs)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            results = [bb.emit_output(o) for o in outs]
        bb.emit_func_output(results[0] if len(results) == 1 else relax.Tuple(results))
    values = {names[id(p)]: np.asarray(p.value(), dtype=np.float32) for p in params}
    return ImportedModel(module.name, "relax", bb.get(), values, specs,
                         "single" if len(results) == 1 else "tuple")


def compile_pybuda_module(module, sample_inputs, config, input_grad_count: int = 0) -> TrainableModel:
    """Trace, then compile forward and backward; trained values are written back into the Parameters."""
    imported = trace_pybuda_module(module, sample_inputs)
    trainable = [p.get_name() for p in module.get_parameters() if p.requires_grad]
    model = TrainableModel(imported, trainable, config, input_grad_count=input_grad_count)
    model.write_back = lambda values: [module.set_parameter(k, v) for k, v in values.items()
                                       if k in imported.params]
    return model
