"""Layer norm, softmax and gelu gradients as the device's own backward ops (tvm_buda/grad_ops.py):
one LayernormBw / SoftmaxBw / GeluDerivative each on the device, the same float32 functions on
the host under CPU fallback, and gradients against torch.autograd either way."""

import numpy as np
import pytest
import torch
import tvm

from buda_runtime_sim.config import CompilerConfig
from buda_runtime_sim.kernels.nn_grad import gelu_derivative_values, layernorm_bw_values, softmax_bw_values
from buda_runtime_sim.verify import pcc
from tvm_buda import grad_ops
from tvm_buda.training.frameworks import import_torch_for_training
from tvm_buda.training.trainable import TrainableModel

FUSED = ["tvm_buda.layernorm_bw", "tvm_buda.softmax_bw", "tvm_buda.gelu_derivative"]


class Block(torch.nn.Module):
    """A layer norm, a gelu and a softmax, as in a transformer layer."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)
        self.dense = torch.nn.Linear(32, 32)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.dense(self.norm(x)))
        return torch.softmax(h @ h.transpose(-1, -2), -1)


def _train(config: CompilerConfig):
    torch.manual_seed(0)
    model = Block()
    with torch.no_grad():   # non-trivial gamma and beta
        model.norm.weight.uniform_(0.5, 1.5)
        model.norm.bias.normal_()
    x = torch.randn(2, 16, 32)
    imported, names = import_torch_for_training(model, [x], "block")
    trained = TrainableModel(imported, list(names), config, input_grad_count=1)
    dy = torch.randn(2, 16, 16, generator=torch.Generator().manual_seed(1))
    _, saved = trained.forward(x.numpy())
    params, inputs = trained.backward(saved, [dy.numpy()])
    leaf = x.clone().requires_grad_()
    model(leaf).backward(dy)
    torch_params = dict(model.named_parameters())
    pairs = [(inputs[imported.inputs[0].name], leaf.grad)] + [(params[g], torch_params[t].grad) for g, t in names.items()]
    return trained, pairs


def test_backward_runs_one_device_op_per_gradient():
    trained, pairs = _train(CompilerConfig())
    ops = trained.backward_model.device_ops()
    assert [op for op in FUSED if op not in ops] == []
    assert ops.count("tvm_buda.layernorm_bw") == 3   # dx, dgamma, dbeta
    assert not {"sqrt", "erf", "exp", "mean"} & set(ops), ops   # no elementwise chain left
    assert trained.backward_model.cpu_ops() == []
    source = "\n".join(p.read_text() for p in trained.backward_model.generated_files if p.suffix == ".py")
    for call in ("pybuda.op.nn.LayernormBw(", "pybuda.op.nn.SoftmaxBw(", "pybuda.op.GeluDerivative("):
        assert call in source
    for got, want in pairs:
        assert pcc(got, want.numpy()) >= 0.99


@pytest.mark.parametrize("fallback", [("layernorm",), ("layernorm", "layernorm_bw", "softmax_bw", "gelu_derivative")])
def test_cpu_fallback_still_trains(fallback):
    """Layer norm on the host, its gradients on the device or (named too) on the host, where the
    Relax VM calls grad_ops' functions."""
    trained, pairs = _train(CompilerConfig(cpu_fallback_ops=set(fallback)))
    assert "nn.layer_norm" in trained.forward_model.cpu_ops()
    host = set(trained.backward_model.cpu_ops())
    assert host >= {op for op in FUSED if op.removeprefix("tvm_buda.") in fallback}
    for got, want in pairs:
        assert pcc(got, want.numpy()) >= 0.99


def test_host_functions_are_the_kernels_float32_functions():
    rng = np.random.default_rng(0)
    x, g, w = (rng.standard_normal(s).astype(np.float32) for s in ((3, 8, 16), (3, 8, 16), (16,)))
    call = tvm.get_global_func(grad_ops.LAYERNORM_BW)
    for operand in (0, 1, 2):
        got = call(tvm.runtime.tensor(g), tvm.runtime.tensor(x), tvm.runtime.tensor(w), 2, 1e-5, operand).numpy()
        np.testing.assert_array_equal(got, layernorm_bw_values(g, x, w, 2, 1e-5, operand))
    got = tvm.get_global_func(grad_ops.SOFTMAX_BW)(tvm.runtime.tensor(x), tvm.runtime.tensor(g), 1).numpy()
    np.testing.assert_array_equal(got, softmax_bw_values(x, g, 1))
    got = tvm.get_global_func(grad_ops.GELU_DERIVATIVE)(tvm.runtime.tensor(x), 1).numpy()
    np.testing.assert_array_equal(got, gelu_derivative_values(x, "tanh"))
