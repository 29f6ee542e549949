"""Our aten converters (tvm_buda/frontends/torch_converters.py) follow PyTorch where TVM 0.27's
importer does not: each case is a small module whose import, built for llvm, must equal PyTorch
exactly, and which TVM's own converters get wrong (checked too, so a fixed TVM shows up here)."""

import numpy as np
import pytest
import torch
import tvm
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program

from tvm_buda.frontends.pytorch import export, import_exported_program


class Indexed(torch.nn.Module):
    def __init__(self, key):
        super().__init__()
        self.key = key

    def forward(self, x):
        return x[self.key] * 1.0


class Lambda(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _falcon_heads(x):
    return torch.cat([x[..., [-2], :], x[..., [-1], :]], dim=-2)      # Falcon's fused key and value heads


def _deberta_buckets(x):
    """DeBERTa-v2/v3's log-bucketed relative positions: a true division of int64 positions, its log."""
    relative = torch.arange(8).unsqueeze(0) - torch.arange(8).unsqueeze(1)   # int64
    mid = 2
    sign = torch.sign(relative)
    inside = (relative < mid) & (relative > -mid)
    abs_pos = torch.where(inside, torch.tensor(mid - 1).type_as(relative), torch.abs(relative))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor(7 / mid)) * (mid - 1)) + mid
    return x + torch.where(abs_pos <= mid, relative.type_as(log_pos), log_pos * sign)


CASES = {
    # ConvBERT's unfold: indices after slices (None) broadcast together and stay in place
    "index after slices": (Indexed((slice(None), slice(None), torch.tensor([[[[0]], [[3]], [[1]]]]),
                                    torch.tensor([[1]]))), (2, 5, 6, 7)),
    "index apart": (Indexed((torch.tensor([1, 0]), slice(None), torch.tensor([2, 3]))), (2, 5, 6, 7)),
    "negative index": (Lambda(_falcon_heads), (1, 16, 4, 32)),
    "select from the end": (Lambda(lambda x: x[:, -1, :] + 1), (1, 16, 64)),          # SigLIP's pooled text token
    "arange down": (Lambda(lambda x: x + torch.arange(16, -16, -1).view(1, 32)), (3, 32)),   # Funnel's positions
    "integer true division and log": (Lambda(_deberta_buckets), (8, 8)),
    "integer clamp with one bound": (Lambda(lambda x: x + torch.arange(-4, 4).clamp(min=-1)), (2, 8)),
    # an MoE router's topk(sorted=False) (EXAONE-MoE, MiniMax): any order is right, so compare sorted values
    "topk in any order": (Lambda(lambda x: torch.topk(x, 3, dim=-1, sorted=False).values.sort(dim=-1).values),
                          (4, 8)),
    "cat with an empty cache": (Lambda(lambda x: torch.cat([torch.empty(0), x], dim=-2)), (1, 2, 8, 4)),
}


def _run(mod, x: torch.Tensor) -> np.ndarray:
    mod, params = relax.frontend.detach_params(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x.numpy()), *params.get("main", [])).numpy()


@pytest.mark.parametrize("case", CASES)
def test_import_equals_pytorch_where_tvms_converter_does_not(case):
    module, shape = CASES[case]
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    if case == "integer true division and log":
        x = torch.zeros(shape)
    with torch.no_grad():
        golden = module(x).numpy()
        program = export(module, (x,), case)
    ours = _run(import_exported_program(program, case).mod, x)
    np.testing.assert_array_equal(ours, golden)
    try:
        theirs = _run(from_exported_program(program, keep_params_as_input=True, unwrap_unit_return_tuple=True), x)
    except Exception:  # noqa: BLE001 - TVM's import or build refuses it
        return
    assert theirs.shape != golden.shape or not np.array_equal(theirs, golden), "TVM's own converter is right now"
