"""float_errors.ignored(): numpy's divide/invalid/overflow warnings off inside, the caller's own
state back outside (nested, after an error, per thread), and kernels quiet either way."""

import threading
import warnings

import numpy as np
import pytest

import pybuda
from buda_runtime_sim.float_errors import ignored


def test_state_inside_and_restored_after_nested_blocks():
    before = np.geterr()
    with ignored():
        with ignored():
            assert np.geterr()["divide"] == np.geterr()["invalid"] == np.geterr()["over"] == "ignore"
        assert np.geterr()["divide"] == "ignore"      # the outer block still holds
        with np.errstate(invalid="raise"):            # a block inside may still ask for more
            with pytest.raises(FloatingPointError):
                np.sqrt(np.float32(-1))
    assert np.geterr() == before


def test_state_restored_after_an_error():
    before = np.geterr()
    with pytest.raises(RuntimeError):
        with ignored():
            with ignored():
                raise RuntimeError("boom")
    assert np.geterr() == before
    with ignored():
        assert np.geterr()["over"] == "ignore"         # the depth is back to zero: a new block sets it again
    assert np.geterr() == before


def test_threads_keep_their_own_state():
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def other():
        with ignored():
            entered.set()
            release.wait(5)
        seen["after"] = np.geterr()["divide"]

    thread = threading.Thread(target=other)
    thread.start()
    entered.wait(5)
    seen["main while other inside"] = np.geterr()["divide"]
    release.set()
    thread.join()
    assert seen == {"main while other inside": "warn", "after": "warn"}


@pytest.mark.parametrize("nested", [False, True])
def test_kernels_do_not_warn_on_device_specials(nested):
    a = np.array([[1.0, 0.0, -1.0, 3e38]], np.float32)
    b = np.array([[0.0, 0.0, 0.0, 10.0]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # any RuntimeWarning fails the test
        if nested:
            with ignored():
                out = pybuda.op.Divide("div", a, b).numpy(), pybuda.op.Multiply("mul", a, b).numpy()
        else:
            out = pybuda.op.Divide("div", a, b).numpy(), pybuda.op.Multiply("mul", a, b).numpy()
    assert np.isinf(out[0][0, 0]) and np.isnan(out[0][0, 1]) and np.isinf(out[1][0, 3])
