"""A weight's bfloat16 fidelity terms carried in an image's device state: a restored module's first
run cuts no weight slices and gives the same bits; HiFi3's terms share the weight's own bytes."""

import numpy as np
import pytest
import torch

import pybuda
from buda_runtime_sim import bf16_gemm, context, fidelity_bf16
from buda_runtime_sim.dataformat import MathFidelity
from buda_runtime_sim.numerics_config import NumericsConfig
from buda_runtime_sim.runtime import image_state
from buda_runtime_sim.tensor import Tensor


class Linear(pybuda.PyBudaModule):
    def __init__(self):
        super().__init__("linear")
        self.w = pybuda.Parameter(96, 64, requires_grad=False)     # torch Linear layout: transposed on use
        self.w2 = pybuda.Parameter(96, 32, requires_grad=False)    # used as is

    def forward(self, x):
        h = pybuda.op.Matmul("mm1", x, pybuda.op.Transpose("wt", self.w, -2, -1))
        return pybuda.op.Matmul("mm2", h, self.w2)


def _linear():
    rng = np.random.default_rng(0)
    block = Linear()
    block.load_parameter_dict({"w": rng.standard_normal((96, 64), dtype=np.float32),
                               "w2": rng.standard_normal((96, 32), dtype=np.float32) / 8})
    return block


def _run(block, x, numerics):
    with context.use(context.ExecutionContext(numerics=numerics)):
        return block(Tensor.from_array(x)).numpy()


@pytest.fixture(autouse=True)
def bf16_route(monkeypatch):
    monkeypatch.setenv("TVM_BUDA_BF16_GEMM", "1")    # the route on any CPU (slow without hardware support)


def _weight_joins(monkeypatch) -> list:
    """Records every weight-side (inner dim -2) bfloat16 join the run makes, on the general path
    (bf16_gemm.side_by_side) and on HiFi3's bfloat16 fast path (fidelity_bf16._joined_bf16)."""
    joins, join, fast_join = [], bf16_gemm.side_by_side, fidelity_bf16._joined_bf16
    monkeypatch.setattr(bf16_gemm, "side_by_side", lambda parts, axis: (joins.append(axis) if axis == -2 else None)
                        or join(parts, axis))
    monkeypatch.setattr(fidelity_bf16, "_joined_bf16", lambda full, low, axis: (
        joins.append(axis) if axis == -2 else None) or fast_join(full, low, axis))
    return joins


@pytest.mark.parametrize("fidelity", [MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi3, MathFidelity.HiFi4])
def test_restored_terms_are_not_cut_again_and_give_the_same_bits(monkeypatch, fidelity):
    numerics = NumericsConfig(math_fidelity=fidelity)
    x = np.random.default_rng(1).standard_normal((2, 32, 64), dtype=np.float32)
    joins = _weight_joins(monkeypatch)
    warm = _linear()
    expected = _run(warm, x, numerics)
    assert len(joins) == 2                                       # wt and w2 sliced once each
    arrays, meta = image_state.capture(warm, numerics)
    assert sorted(t["phases"] for m in meta.values() for t in m["terms"]) == [fidelity.phases] * 2

    loaded = _linear()
    image_state.restore(loaded, numerics, arrays, meta)
    joins.clear()
    got = _run(loaded, x, numerics)
    assert joins == [] and np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    restored = [t for p in loaded.get_parameters() for t in [*p.consteval.values(), *p._device_copies.values()]]
    if fidelity.phases <= 2:     # a float32 x fits SrcB's LoFi/HiFi2 slices: the route reads only the terms
        assert restored and not any(t.storage_made for t in restored)
    again = _linear()                                            # and without the terms, they are cut
    image_state.restore(again, numerics, arrays, {k: {**m, "terms": []} for k, m in meta.items()
                                                  if not any(t["array"] == k for t in m["terms"])})
    assert np.array_equal(_run(again, x, numerics).view(np.uint32), expected.view(np.uint32)) and joins


def test_terms_that_start_with_the_weight_replace_its_bytes():
    numerics = NumericsConfig(math_fidelity=MathFidelity.HiFi3)
    warm = _linear()
    _run(warm, np.ones((1, 32, 64), np.float32), numerics)
    arrays, meta = image_state.capture(warm, numerics)
    for entry, info in meta.items():
        (terms,) = info["terms"]
        stored = arrays[entry]
        if terms["array"] == entry:   # bfloat16 weight, HiFi3: [w; low(w)] holds w itself first
            assert terms["count"] == 2 and stored.shape[-2] == 2 * info["shape"][-2] // 32 * 32
        else:                          # LoFi-style first terms would be stored beside
            assert terms["array"] in arrays
    assert any(t["array"] == e for e, m in meta.items() for t in m["terms"])
    assert sum(a.nbytes for a in arrays.values()) == sum(2 * 2 * np.prod(m["shape"]) for m in meta.values())


@pytest.mark.parametrize("change, match", [
    (lambda t: t.update(count=3), "does not hold 3 terms|cannot be"),
    (lambda t: t.update(count="2"), "term count"),
    (lambda t: t.update(kind="srca"), "unknown fidelity terms"),
    (lambda t: t.update(phases=7), "unknown fidelity terms"),
    (lambda t: t.update(array="nope"), "holds \\(128, 96\\), a \\(64, 96\\) tensor"),   # the whole array, two terms
])
def test_terms_that_do_not_fit_are_an_error(change, match):
    numerics = NumericsConfig(math_fidelity=MathFidelity.HiFi3)
    warm = _linear()
    _run(warm, np.ones((1, 32, 64), np.float32), numerics)
    arrays, meta = image_state.capture(warm, numerics)
    entry = next(e for e, m in meta.items() if m["terms"] and m["terms"][0]["array"] == e)
    change(meta[entry]["terms"][0])
    with pytest.raises(ValueError, match=match):
        image_state.restore(_linear(), numerics, arrays, meta)
    meta[entry]["terms"] = "all"
    with pytest.raises(ValueError, match="must be a list of tables"):
        image_state.restore(_linear(), numerics, arrays, meta)


def test_restored_terms_are_views_of_the_state_buffer():
    numerics = NumericsConfig(math_fidelity=MathFidelity.HiFi2)
    warm = _linear()
    _run(warm, np.ones((1, 32, 64), np.float32), numerics)
    arrays, meta = image_state.capture(warm, numerics)
    loaded = _linear()
    image_state.restore(loaded, numerics, arrays, meta)
    tensors = [t for p in loaded.get_parameters() for t in [*p.consteval.values(), *p._device_copies.values()]]
    for tensor in tensors:
        joined, count = tensor.derived()[("srca_bf16", 2)]
        assert count == 1 and joined.dtype == torch.bfloat16
        assert any(joined.data_ptr() == a.ctypes.data for a in arrays.values())      # no copy
