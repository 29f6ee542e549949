"""FoldBatchNormIntoConv: the folded model still matches PyTorch, and the rewrite fires only where
batch norm follows a convolution whose weights are known at compile time."""

import numpy as np
import pytest
import torch
from torch import nn
from tvm import relax

import tvm_buda
from buda_runtime_sim.verify import compare
from relay_passes.fold_batch_norm import FoldBatchNormIntoConv
from tvm_buda.frontends.dispatch import import_model
from tests.relay_passes.ir import op_names, run_llvm


def _with_stats(bn: nn.BatchNorm2d, seed: int) -> nn.BatchNorm2d:
    """Non-trivial running statistics and affine weights (a fresh BatchNorm2d is the identity)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        bn.running_mean.copy_(torch.rand(bn.num_features, generator=g) * 2 - 1)
        bn.running_var.copy_(torch.rand(bn.num_features, generator=g) * 1.5 + 0.5)
        bn.weight.copy_(torch.rand(bn.num_features, generator=g) + 0.5)
        bn.bias.copy_(torch.rand(bn.num_features, generator=g) * 2 - 1)
    return bn


class ConvBnBlock(nn.Module):
    """A biased conv + BN, a bias-free 1x1 conv + BN, a grouped one, and a residual."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 8, 3, padding=1), _with_stats(nn.BatchNorm2d(8), 1)
        self.c2, self.b2 = nn.Conv2d(8, 8, 1, bias=False), _with_stats(nn.BatchNorm2d(8), 2)
        self.c3, self.b3 = nn.Conv2d(8, 8, 3, padding=1, groups=4, bias=False), _with_stats(nn.BatchNorm2d(8), 3)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b3(self.c3(self.b2(self.c2(y)))) + y)


def _imported(model, shape=(1, 3, 16, 16)):
    torch.manual_seed(0)
    return import_model(model.eval(), (torch.randn(*shape),), "bn")


def test_folded_model_matches_pytorch_and_drops_the_elementwise_ops():
    torch.manual_seed(0)
    model, x = ConvBnBlock().eval(), torch.randn(1, 3, 16, 16)
    compiled = tvm_buda.compile_model(model, (x,), name="conv_bn")
    assert not {"subtract", "multiply"} & set(compiled.device_ops())
    assert compiled.device_ops().count("nn.conv2d") == 3
    with torch.no_grad():
        golden = model(x)
    result = compare(compiled.run(x), golden)
    assert result.passed and result.pcc > 0.999, result
    assert {"p_c1_weight", "p_c1_bias", "p_b1_weight", "p_b1_bias", "p_c3_weight"} <= set(
        compiled.summary.baked_weights)


def test_rewrite_is_exact_algebra_in_float32():
    """Folded and unfolded graphs built for llvm agree to float32 rounding."""
    imported = _imported(ConvBnBlock())
    bound = relax.transform.BindParams("main", imported.params)(imported.mod)   # weights as constants
    folded = FoldBatchNormIntoConv()(bound)
    assert "relax.nn.batch_norm" not in op_names(folded) and "relax.nn.batch_norm" in op_names(bound)
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    outs = [run_llvm(relax.transform.DecomposeOpsForInference()(mod), x) for mod in (bound, folded)]
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)


def test_weights_of_unknown_value_are_left_alone():
    """Parameters whose values the caller does not hand in are not constants: no rewrite."""
    mod = _imported(ConvBnBlock()).mod
    assert op_names(FoldBatchNormIntoConv()(mod)).count("relax.nn.batch_norm") == 3


def test_only_after_a_convolution():
    model = nn.Sequential(nn.ReLU(), _with_stats(nn.BatchNorm2d(3), 4))
    imported = _imported(model)
    out = FoldBatchNormIntoConv(imported.params)(imported.mod)
    assert "relax.nn.batch_norm" in op_names(out)


class SharedConv(nn.Module):
    """The conv's output feeds the batch norm and something else: folding would change the other user."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 4, 1, bias=False), _with_stats(nn.BatchNorm2d(4), 5)

    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) + y


def test_not_when_the_convolution_has_another_user():
    imported = _imported(SharedConv())
    assert "relax.nn.batch_norm" in op_names(FoldBatchNormIntoConv(imported.params)(imported.mod))


def test_updating_a_folded_weight_is_refused():
    torch.manual_seed(0)
    model, x = ConvBnBlock().eval(), torch.randn(1, 3, 16, 16)
    compiled = tvm_buda.compile_model(model, (x,), name="conv_bn_update")
    with pytest.raises(ValueError, match=r"p_b1_weight.*folded into constants.*compile the model again"):
        compiled.update_parameters({"p_b1_weight": np.ones(8, np.float32)})


def test_training_builds_keep_weights_as_parameters():
    """Training updates weights every step: its builds (fold_weights=False) never bake them in."""
    from tvm_buda.builder import build_imported
    from tvm_buda.compiled_model import resolve_config

    imported = _imported(ConvBnBlock())
    compiled = build_imported(imported, resolve_config(None), fold_weights=False)
    assert compiled.summary.baked_weights == []
    assert "multiply" in compiled.device_ops()
    compiled.update_parameters({"p_b1_weight": np.ones(8, np.float32)})   # accepted
