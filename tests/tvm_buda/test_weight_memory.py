"""A compiled model holds each weight once per form a kernel reads: a Linear weight, read only
through its transpose (computed once from weights, consteval), is held as that transpose's device
bytes alone, not also as an untransposed device copy."""

import torch

import tvm_buda
from buda_runtime_sim import stored_tensor
from buda_runtime_sim.stored_tensor import StoredTensor, stored_bytes
from tests.helpers import assert_matches_golden


def test_a_weight_read_through_its_transpose_is_held_once(monkeypatch):
    monkeypatch.setattr(stored_tensor, "MIN_ELEMENTS", 64)       # these small weights held as bytes
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256, bias=False), torch.nn.ReLU(),
                                torch.nn.Linear(256, 64, bias=False)).eval()
    x = torch.randn(32, 128)
    compiled = tvm_buda.compile_model(model, (x,), name="weights_once")
    for _ in range(2):
        assert_matches_golden(compiled.run(x), model(x).detach())
    params = [p for sub, _ in compiled.subgraphs for p in sub.module.get_parameters()]
    assert len(params) == 2
    for p in params:
        kept = list(p.consteval.values())
        assert p._device_copies == {}, f"{p.get_name()}: an untransposed copy kept beside its transpose"
        assert len(kept) == 1 and type(kept[0]) is StoredTensor
        assert stored_bytes(kept[0]) == 2 * p.value().size       # Float16_b: 2 bytes a value, once
