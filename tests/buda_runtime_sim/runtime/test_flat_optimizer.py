"""The host optimizers' flat step (every parameter's values laid end to end, flat_values) gives the
bits the per-parameter loop gives: weights and state, step after step, NaN/inf/subnormals included;
its results are views of one DLPack-aligned buffer, read back whole on the next step."""

import numpy as np
import pytest

from buda_runtime_sim.runtime import flat_values
from buda_runtime_sim.runtime.flat_values import ALIGNMENT, FlatLayout, FlatValues, flat_of, owner_of
from buda_runtime_sim.runtime.optimizers import LAMB, SGD, Adam, AdamW

SHAPES = {"w": (64, 64), "b": (64,), "emb": (3, 5), "s": (), "wide": (4, 40)}


def _values(seed, specials=False) -> dict:
    rng = np.random.default_rng(seed)
    out = {n: rng.standard_normal(s).astype(np.float32) for n, s in SHAPES.items()}
    if specials:
        out["emb"].reshape(-1)[:6] = [np.nan, np.inf, -np.inf, 1e-45, -0.0, 3e38]
    return out


def _run(make, flat: bool, steps: int = 4, specials=False):
    optimizer = make()
    optimizer.elementwise = optimizer.elementwise and flat   # per instance: the loop when flat=False
    optimizer.bind(list(SHAPES))
    params = _values(0, specials)
    with np.errstate(all="ignore"):
        for step in range(steps):
            new = optimizer.step(params, _values(step + 1, specials))
            assert (owner_of(new) is not None) == flat      # the path under test was taken
            params = dict(params, **new)
    return params, optimizer.state


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


@pytest.mark.parametrize("make", [
    lambda: SGD(0.05), lambda: SGD(0.1, momentum=0.9), lambda: SGD(0.1, weight_decay=0.01),
    lambda: SGD(0.1, momentum=0.9, weight_decay=0.01), lambda: Adam(0.01), lambda: Adam(0.01, weight_decay=0.1),
    lambda: AdamW(0.01, weight_decay=0.1),
], ids=["sgd", "momentum", "decay", "momentum-decay", "adam", "adam-decay", "adamw"])
@pytest.mark.parametrize("specials", [False, True], ids=["normal", "specials"])
def test_flat_step_has_the_loops_bits(make, specials):
    flat_params, flat_state = _run(make, True, specials=specials)
    loop_params, loop_state = _run(make, False, specials=specials)
    for name in SHAPES:
        assert flat_params[name].shape == loop_params[name].shape
        np.testing.assert_array_equal(_bits(flat_params[name]), _bits(loop_params[name]))
        assert flat_state[name].keys() == loop_state[name].keys()
        for key in loop_state[name]:
            np.testing.assert_array_equal(_bits(flat_state[name][key]), _bits(loop_state[name][key]))


def test_results_are_aligned_views_read_back_without_a_copy(monkeypatch):
    optimizer = SGD(0.1, momentum=0.9)
    optimizer.bind(list(SHAPES))
    params = optimizer.step(_values(0), _values(1))
    owner = owner_of(params)
    assert owner is not None and owner.aligned
    for name, value in params.items():
        assert value.dtype == np.float32 and value.shape == SHAPES[name]
        assert value.ctypes.data % ALIGNMENT == 0 and value.flags.c_contiguous and value.flags.writeable
    gathered = []
    monkeypatch.setattr(FlatLayout, "gather", lambda self, values: gathered.append(1) or _gather(self, values))
    grads = _values(2)
    optimizer.step(params, grads)
    assert len(gathered) == 1        # the gradients only: the weights and the momentum are read whole


_gather = FlatLayout.gather


def _flat_and_loop(make, run) -> None:
    """`run(optimizer)` on the flat path and on the per-weight loop gives the same bits."""
    results = []
    for flat in (True, False):
        optimizer = make()
        optimizer.elementwise = flat
        optimizer.bind(list(SHAPES))
        results.append(run(optimizer))
    for name in SHAPES:
        np.testing.assert_array_equal(_bits(results[0][name]), _bits(results[1][name]))


def test_a_weight_written_in_place_is_read_as_written():
    """Reading the buffer whole reads each view's memory: what the loop would read."""
    def run(optimizer):
        params = optimizer.step(_values(0), _values(1))
        params["w"][3, 4] = 123.0
        return optimizer.step(params, _values(2))

    _flat_and_loop(lambda: SGD(0.1), run)


def test_replaced_views_and_mixed_state_fall_back_with_the_same_bits():
    def run(optimizer):
        params = optimizer.step(_values(0), _values(1))
        params["b"] = params["b"] + 1                         # no longer the buffer's view
        del optimizer.state["s"]                              # one parameter without momentum: the loop
        params = dict(params, **optimizer.step(params, _values(2)))
        return dict(params, **optimizer.step(params, _values(3)))

    _flat_and_loop(lambda: SGD(0.1, momentum=0.9), run)


def test_state_of_another_shape_takes_the_loop():
    """A loaded momentum of shape (1,) broadcasts in the rule: the loop's result, not a misread slot."""
    def run(optimizer):
        optimizer.load_state_dict({"learning_rate": 0.1, "state": {
            n: {"momentum_buffer": np.full((1,) if n == "w" else s, 0.5, np.float32)} for n, s in SHAPES.items()}})
        return optimizer.step(_values(0), _values(1))

    _flat_and_loop(lambda: SGD(0.1, momentum=0.9), run)


def test_state_dict_round_trip_on_the_flat_path():
    first = SGD(0.1, momentum=0.9)
    first.bind(list(SHAPES))
    params = first.step(_values(0), _values(1))
    second = SGD(0.1, momentum=0.9)
    second.load_state_dict(first.state_dict())
    a, b = first.step(params, _values(2)), second.step(params, _values(2))
    for name in SHAPES:
        np.testing.assert_array_equal(_bits(a[name]), _bits(b[name]))


def test_shape_mismatch_is_reported_before_anything_changes():
    optimizer = SGD(0.1, momentum=0.9)
    optimizer.bind(list(SHAPES))
    grads = _values(1)
    grads["emb"] = np.zeros((5, 3), np.float32)
    with pytest.raises(ValueError, match="gradient of emb has shape"):
        optimizer.step(_values(0), grads)
    assert optimizer.state == {}


def test_lamb_and_missing_gradients_keep_the_loop():
    lamb = LAMB(0.01)
    assert not lamb.elementwise
    optimizer = SGD(0.1)
    optimizer.bind(list(SHAPES))
    grads = _values(1)
    del grads["b"]
    out = optimizer.step(_values(0), grads)
    assert set(out) == set(SHAPES) - {"b"}


def test_flat_of_needs_the_very_views_of_a_live_buffer():
    layout = FlatLayout(list(SHAPES), list(SHAPES.values()))
    held = FlatValues(layout, layout.gather(_values(0)))
    views = dict(held.views)
    assert flat_of(views, layout) is held.buffer
    assert flat_of(views, FlatLayout(list(SHAPES), list(SHAPES.values()))) is held.buffer   # an equal layout
    assert flat_of(dict(views, w=views["w"].copy()), layout) is None
    assert flat_of(dict(views, w=views["w"][:]), layout) is None           # same memory, another object
    assert owner_of({"b": views["b"]}) is held and owner_of({"w": views["b"]}) is None
    views["w"].shape = (32, 128)                                            # the same object, reshaped in place
    assert flat_of(views, layout) is None and owner_of({"w": views["w"]}) is None
    views["w"].shape = (64, 64)
    views["w"].dtype = np.int32                                             # reinterpreted in place
    assert flat_of(views, layout) is None
    views["w"].dtype = np.float32
    assert flat_of(views, layout) is held.buffer
    gaps = np.ones(layout.total, bool)
    for at, size in zip(layout.offsets, layout.sizes):
        assert at % (ALIGNMENT // 4) == 0
        gaps[at:at + size] = False
    assert not held.buffer[gaps].any()                                      # zeros between slots
    del held, views
    import gc
    gc.collect()
    assert not flat_values._OWNERS or all(o.layout is not layout for o in flat_values._OWNERS.values())
