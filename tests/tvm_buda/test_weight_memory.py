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


def test_programs_of_one_model_share_their_weights_device_bytes(monkeypatch):
    """Generation compiles one model several times (prefill and decode, per batch and cache length):
    the second program's device weights are the first one's tensors (one copy), its results are its
    own, and the shared tensors go with the last program holding them."""
    import gc

    from buda_runtime_sim import shared_weights

    monkeypatch.setattr(stored_tensor, "MIN_ELEMENTS", 64)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256, bias=False), torch.nn.ReLU(),
                                torch.nn.Linear(256, 64, bias=False)).eval()
    gc.collect()
    before = shared_weights.entries()
    programs = {}
    for batch in (32, 1):
        x = torch.randn(batch, 128)
        programs[batch] = tvm_buda.compile_model(model, (x,), name=f"shared_b{batch}")
        assert_matches_golden(programs[batch].run(x), model(x).detach())

    def kept(compiled):
        return [t for sub, _ in compiled.subgraphs for p in sub.module.get_parameters()
                for t in p.consteval.values()]

    first, second = kept(programs[32]), kept(programs[1])
    assert len(first) == 2 and all(a is b for a, b in zip(first, second))
    assert shared_weights.entries() - before == 2
    del programs, first, second
    gc.collect()
    assert shared_weights.entries() == before


def test_only_bytes_we_own_are_shared():
    """Equal contents share one tensor; other contents, formats or a view of framework memory (a
    bfloat16 weight used as its own Float16_b bytes, which the framework may change) do not."""
    import ml_dtypes
    import numpy as np

    from buda_runtime_sim.dataformat import DataFormat
    from buda_runtime_sim.stored_tensor import from_value

    values = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    a, b = from_value(values, DataFormat.Float16_b), from_value(values.copy(), DataFormat.Float16_b)
    assert a is b and not a.codec.array.flags.writeable
    assert from_value(values + 1, DataFormat.Float16_b) is not a
    assert from_value(values, DataFormat.Bfp8_b) is not a
    framework = values.astype(ml_dtypes.bfloat16)
    assert from_value(framework, DataFormat.Float16_b) is not from_value(framework, DataFormat.Float16_b)
