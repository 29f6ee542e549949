"""Device state carried by an image: what a first run computes from the weights, restored so a
loaded module's first run computes none of it and gives the same bits."""

import numpy as np
import pytest

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.numerics_config import MixedPrecisionRule, NumericsConfig
from buda_runtime_sim.runtime import image_state
from buda_runtime_sim.tensor import Tensor
from buda_runtime_sim.widen_on_read import widen

NUMERICS = NumericsConfig(rules=[MixedPrecisionRule(op_type="matmul", name_regex="mm2", input_df=DataFormat.Bfp8_b)])


class Block(pybuda.PyBudaModule):
    def __init__(self, name="block"):
        super().__init__(name)
        self.w = pybuda.Parameter(48, 40, requires_grad=False)     # torch Linear layout: transposed on use
        self.b = pybuda.Parameter(48, requires_grad=False)
        self.w2 = pybuda.Parameter(48, 24, requires_grad=False)    # used as is, in a block format
        self.add_constant("scale", shape=(1, 48))

    def forward(self, x):
        wt = pybuda.op.Transpose("wt", self.w, -2, -1)
        h = pybuda.op.Add("bias", pybuda.op.Matmul("mm1", x, wt), self.b)
        h = pybuda.op.Matmul("mm2", h, self.w2)
        scaled = pybuda.op.Multiply("scaled", self.get_constant("scale"), pybuda.op.Transpose("st", self.w2, -2, -1))
        return h, scaled


def _block(seed=0):
    rng = np.random.default_rng(seed)
    block = Block()
    block.load_parameter_dict({"w": rng.standard_normal((48, 40), dtype=np.float32),
                               "b": rng.standard_normal(48, dtype=np.float32),
                               "w2": rng.standard_normal((48, 24), dtype=np.float32) / 3,
                               "scale": rng.standard_normal((1, 48), dtype=np.float32)})
    return block


def _run(block, x):
    with context.use(context.ExecutionContext(numerics=NUMERICS)):
        return [t.numpy() for t in block(Tensor.from_array(x))]


def _state(block):
    return sum(len(p.consteval) + len(p._device_copies) for p in block.get_parameters())


def test_a_restored_module_computes_nothing_from_its_weights_and_gives_the_same_bits(monkeypatch):
    x = np.random.default_rng(1).standard_normal((2, 40, 40), dtype=np.float32)
    warm = _block()
    expected = _run(warm, x)
    arrays, meta = image_state.capture(warm, NUMERICS)
    kinds = sorted(m["kind"] for m in meta.values())
    assert kinds == ["consteval", "consteval", "device_copy"]               # wt, st; b (w2 feeds a consteval)
    assert {m["storage"] for m in meta.values()} == {"bfloat16"}             # bfloat16 / Bfp8_b values: 2 bytes each

    loaded = _block()
    assert image_state.restore(loaded, NUMERICS, arrays, meta) == 3
    before = _state(loaded)
    converted = []
    monkeypatch.setattr(pybuda.Parameter, "value", lambda self: converted.append(self._name) or self._value)
    got = _run(loaded, x)
    assert all(np.array_equal(a.view(np.uint32), b.view(np.uint32)) for a, b in zip(got, expected))
    assert converted == ["w2"] and _state(loaded) == before + 1   # only w2 for mm2 (in Bfp8_b) was converted


def test_float32_values_are_stored_as_float32():
    padded = np.array([[1.0, 1 + 2 ** -20]], np.float32)
    stored, storage = image_state._pack(padded)
    assert storage == "float32" and np.array_equal(stored, padded)
    stored, storage = image_state._pack(np.array([[1.5, -np.inf, np.nan]], np.float32))
    assert storage == "bfloat16" and stored.dtype == np.int16
    assert np.array_equal(widen(stored), [[1.5, -np.inf, np.nan]], equal_nan=True)


@pytest.mark.parametrize("change, match", [
    (lambda m: m.update(parameter="nope"), "names parameter 'nope'"),
    (lambda m: m.update(shape=[48, 41]), "is stored as"),
    (lambda m: m.update(kind="pickle"), "unknown kind"),
    (lambda m: m.update(storage="float32"), "stored as int16"),
    (lambda m: m.update(dtype="object"), "unsupported dtype"),
])
def test_state_that_does_not_fit_the_module_is_an_error(change, match):
    warm = _block()
    _run(warm, np.ones((1, 40, 40), np.float32))
    arrays, meta = image_state.capture(warm, NUMERICS)
    entry = next(k for k, m in meta.items() if m["kind"] == "device_copy")
    change(meta[entry])
    with pytest.raises(ValueError, match=match):
        image_state.restore(_block(), NUMERICS, arrays, meta)


def test_stale_consteval_results_are_not_captured():
    warm = _block()
    _run(warm, np.ones((1, 40, 40), np.float32))
    warm.set_parameter("w", np.zeros((48, 40), np.float32))     # the cached transpose of w is stale now
    _, meta = image_state.capture(warm, NUMERICS)
    assert [m["name"] for m in meta.values() if m["kind"] == "consteval"] == ["st"]
