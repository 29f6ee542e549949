"""The gradient of every op-table op, computed on the simulator, against torch.autograd.

Ops are grouped into a few small models (one compile each) in which every op reads its own
inputs, so each input gradient belongs to one op. Forward and backward are compiled once
(TrainableModel) and run at the default formats (PCC >= 0.99) and at Float32 / HiFi4 (within 1%
of the largest float32 torch gradient, PCC >= 0.9999). Comparisons, logic and argmax have no
gradient; `where` is checked through its float operands.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from buda_runtime_sim.config import CompilerConfig
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from buda_runtime_sim.numerics_config import NumericsConfig
from buda_runtime_sim.verify import pcc
from tvm_buda.training.frameworks import import_torch_for_training
from tvm_buda.training.trainable import TrainableModel

# The inputs below are drawn at import time: seed them, so they do not depend on which test files
# ran first (an unlucky draw put several clip inputs next to its bounds, PCC 0.9888).
torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


def pos(*shape):
    return torch.rand(*shape) + 0.5


def distinct(rows, cols):
    """Values exact in bfloat16 and distinct per row: a max/min has no ties at any format."""
    return torch.stack([torch.randperm(cols).float() / 8 - 2 for _ in range(rows)])


# group -> [(relax op the device must run, function of (module, *inputs), inputs, module with parameters)]
GROUPS = {
    "binary": [
        ("matmul", lambda m, a, b: a @ b, (r(8, 32), r(32, 16)), None),
        ("matmul", lambda m, a, b: a @ b, (r(2, 8, 32), r(32, 16)), None),  # batched x 2-D: a Linear on a sequence
        ("add", lambda m, a, b: a + b, (r(8, 32), r(32)), None),
        ("subtract", lambda m, a, b: a - b, (r(8, 32), r(8, 32)), None),
        ("multiply", lambda m, a, b: a * b, (r(8, 32), r(8, 32)), None),
        ("divide", lambda m, a, b: a / b, (r(8, 32), pos(8, 32)), None),
        ("maximum", lambda m, a, b: torch.maximum(a, b), (r(8, 32), r(8, 32)), None),
        ("minimum", lambda m, a, b: torch.minimum(a, b), (r(8, 32), r(8, 32)), None),
        ("power", lambda m, a, b: torch.pow(a, b), (pos(8, 32), r(8, 32)), None),
        ("concat", lambda m, a, b: torch.cat([a, b], -1), (r(8, 32), r(8, 16)), None),
        ("where", lambda m, a: torch.where(a > 0, a, a * 3.0), (r(8, 32),), None),
    ],
    "unary": [
        ("nn.relu", lambda m, a: F.relu(a), (r(8, 32),), None),
        ("nn.gelu", lambda m, a: F.gelu(a), (r(8, 32),), None),
        ("nn.gelu_tanh", lambda m, a: F.gelu(a, approximate="tanh"), (r(8, 32),), None),
        ("nn.leakyrelu", lambda m, a: F.leaky_relu(a, 0.1), (r(8, 32),), None),
        ("sigmoid", lambda m, a: torch.sigmoid(a), (r(8, 32),), None),
        ("tanh", lambda m, a: torch.tanh(a), (r(8, 32),), None),
        ("exp", lambda m, a: torch.exp(a), (r(8, 32),), None),
        ("sqrt", lambda m, a: torch.sqrt(a), (pos(8, 32),), None),
        ("log", lambda m, a: torch.log(a), (pos(8, 32),), None),
        ("abs", lambda m, a: torch.abs(a), (r(8, 32),), None),
        ("sin", lambda m, a: torch.sin(a), (r(8, 32),), None),
        ("cos", lambda m, a: torch.cos(a), (r(8, 32),), None),
        ("erf", lambda m, a: torch.erf(a), (r(8, 32),), None),
        ("clip", lambda m, a: torch.clamp(a, -0.5, 0.5), (r(8, 32),), None),
    ],
    "normalise_reduce": [
        ("nn.softmax", lambda m, a: torch.softmax(a, -1), (r(8, 32),), None),
        ("nn.log_softmax", lambda m, a: torch.log_softmax(a, -1), (r(8, 32),), None),
        ("nn.layer_norm", lambda m, a: m(a), (r(8, 32),), torch.nn.LayerNorm(32)),
        ("sum", lambda m, a: a.sum(-1), (r(8, 32),), None),
        ("mean", lambda m, a: a.mean(0), (r(8, 32),), None),
        ("max", lambda m, a: a.max(-1, keepdim=True).values, (distinct(8, 32),), None),
    ],
    "layout": [
        ("permute_dims", lambda m, a: a.permute(1, 0, 2), (r(4, 8, 32),), None),
        ("reshape", lambda m, a: a.reshape(4, 64) * 2.0, (r(8, 32),), None),
        ("reshape", lambda m, a: torch.flatten(a, 1) * 2.0, (r(4, 2, 32),), None),  # flatten imports as reshape
        ("squeeze", lambda m, a: a.squeeze(1) * 2.0, (r(8, 1, 32),), None),
        ("expand_dims", lambda m, a: a.unsqueeze(0) * 2.0, (r(8, 32),), None),
        ("broadcast_to", lambda m, a: a.expand(8, 32) * 2.0, (r(1, 32),), None),
        ("strided_slice", lambda m, a: a[:, 3:20] * 2.0, (r(8, 32),), None),
        ("nn.pad", lambda m, a: F.pad(a, (1, 2, 3, 4)) * 2.0, (r(8, 32),), None),
    ],
    "convolution": [
        ("nn.conv2d", lambda m, a: m(a), (r(1, 3, 12, 12),), torch.nn.Conv2d(3, 4, 3, padding=1)),
        ("nn.conv2d_transpose", lambda m, a: m(a), (r(1, 4, 6, 6),), torch.nn.ConvTranspose2d(4, 3, 3, stride=2)),
        ("nn.max_pool2d", lambda m, a: F.max_pool2d(a, 2), (r(1, 3, 8, 8),), None),
        ("nn.avg_pool2d", lambda m, a: F.avg_pool2d(a, 2), (r(1, 3, 8, 8),), None),
    ],
}


class Group(torch.nn.Module):
    """Every case of a group side by side: inputs in case order, one output per case."""

    def __init__(self, cases):
        super().__init__()
        self.cases = cases
        self.parts = torch.nn.ModuleList([m if m is not None else torch.nn.Identity() for _, _, _, m in cases])

    def forward(self, *xs):
        outs, i = [], 0
        for (op, fn, inputs, _), part in zip(self.cases, self.parts):
            outs.append(fn(part, *xs[i:i + len(inputs)]))
            i += len(inputs)
        return tuple(outs)


FLOAT32 = NumericsConfig(default_df_override=DataFormat.Float32, accumulate_df=DataFormat.Float32,
                         math_fidelity=MathFidelity.HiFi4)


def _check(got: dict, expected: dict, owner: dict) -> None:
    for numerics, values in got.items():
        assert set(values) == set(expected), numerics
        for key, value in values.items():
            want, label = expected[key], f"{owner[key]} ({key}) at {numerics}"
            if numerics == "Float32/HiFi4":
                error = float(np.abs(value - want).max())
                assert error <= 1e-2 * max(float(np.abs(want).max()), 1e-6), f"{label}: max error {error}"
                assert pcc(value, want) >= 0.9999, f"{label}: pcc {pcc(value, want)}"
            else:
                assert pcc(value, want) >= 0.99, f"{label}: pcc {pcc(value, want)}"


def _device_gradients(trained, inputs, dys) -> dict:
    out = {}
    for label, numerics in (("default formats", None), ("Float32/HiFi4", FLOAT32)):
        if numerics is not None:
            trained.forward_model.exec_context.numerics = numerics
            trained.backward_model.exec_context.numerics = numerics
        _, saved = trained.forward(*inputs)
        param_grads, input_grads = trained.backward(saved, dys)
        out[label] = {**input_grads, **param_grads}
    return out


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_gradients_match_torch_autograd(group):
    torch.manual_seed(0)
    cases = GROUPS[group]
    model = Group(cases)
    inputs = [x for _, _, xs, _ in cases for x in xs]
    imported, names = import_torch_for_training(model, inputs, group)
    trained = TrainableModel(imported, list(names), CompilerConfig(), input_grad_count=len(inputs))
    missing = [op for op, _, _, _ in cases if op not in trained.forward_model.device_ops()]
    assert not missing, f"ops not on the device: {missing}"
    assert trained.backward_model.cpu_ops() == [] or group == "convolution", trained.backward_model.cpu_ops()

    leaves = [x.clone().requires_grad_() for x in inputs]
    outputs = model(*leaves)
    gen = torch.Generator().manual_seed(1)
    dys = [torch.randn(o.shape, generator=gen) for o in outputs]
    torch.autograd.backward(outputs, dys)
    expected = {s.name: x.grad.numpy() for s, x in zip(imported.inputs, leaves)}
    params = dict(model.named_parameters())
    expected.update({g: params[t].grad.numpy() for g, t in names.items()})
    owner = {s.name: op for s, op in zip(imported.inputs, [op for op, _, xs, _ in cases for _ in xs])}
    owner.update({g: t for g, t in names.items()})
    _check(_device_gradients(trained, [x.numpy() for x in inputs], [d.numpy() for d in dys]), expected, owner)


def test_min_reduction_gradient():
    """relax.min (TFLite/ONNX reductions; torch.export has no importer for it) built directly."""
    from tvm import relax

    from tvm_buda.frontends.imported import ImportedModel, TensorSpec

    x = distinct(8, 32)
    bb = relax.BlockBuilder()
    var = relax.Var("x", relax.TensorType((8, 32), "float32"))
    with bb.function("main", [var], attrs={"num_input": 1}):
        with bb.dataflow():
            out = bb.emit_output(relax.op.min(var, axis=[-1], keepdims=False))
        bb.emit_func_output(out)
    imported = ImportedModel("min", "relax", bb.get(), {}, [TensorSpec("x", (8, 32), "float32")])
    trained = TrainableModel(imported, [], CompilerConfig(), input_grad_count=1)
    assert "min" in trained.forward_model.device_ops()
    leaf = x.clone().requires_grad_()
    dy = torch.randn(8)
    torch.amin(leaf, -1).backward(dy)
    _check(_device_gradients(trained, [x.numpy()], [dy.numpy()]), {"x": leaf.grad.numpy()}, {"x": "min"})
