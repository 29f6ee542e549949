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


def test_no_float32_widening_of_a_block_float_weight_survives_a_run(monkeypatch, tmp_path):
    """A model whose weights are Bfp8_b holds their codes and exponents after its runs: nothing
    reachable from a weight is a float32 array of its size, and a warm run leaves no memory behind
    (tracemalloc: numpy reports its allocations)."""
    import gc
    import tracemalloc

    import numpy as np

    from buda_runtime_sim.config import CompilerConfig
    from buda_runtime_sim.dataformat import DataFormat

    monkeypatch.setattr(stored_tensor, "MIN_ELEMENTS", 64)
    monkeypatch.setenv("TVM_BUDA_SLICE_CACHE_MB", "1024")          # (a float32 slice would be kept if made)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256, bias=False), torch.nn.ReLU(),
                                torch.nn.Linear(256, 128, bias=False)).eval()
    x = torch.randn(32, 256)
    config = CompilerConfig(generated_modules_dir=str(tmp_path), default_df_override=DataFormat.Bfp8_b)
    compiled = tvm_buda.compile_model(model, (x,), config=config, name="bfp8_weights")
    assert_matches_golden(compiled.run(x), model(x).detach())
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        out = compiled.run(x)
        del out
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 32 * 1024                                        # a warm run keeps nothing
    params = [p for sub, _ in compiled.subgraphs for p in sub.module.get_parameters()]
    assert len(params) == 2
    for p in params:
        held = [*p._device_copies.values(), *p.consteval.values()]
        assert held and all(type(t) is StoredTensor and t.data_format is DataFormat.Bfp8_b for t in held)
        assert all(t.derived() is None for t in held)               # no slices kept for block floats
        assert sum(stored_bytes(t) for t in held) <= p.value().size * (1 + 1 / 16)
        for t in held:                                             # codes and exponents (or a view of them)
            codec = t.codec.inner if type(t.codec).__name__ == "SwappedCodec" else t.codec
            assert type(codec).__name__ == "BlockCodec" and codec.codes.dtype == np.uint8
