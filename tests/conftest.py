import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Each test runs in its own directory (generated_modules/ lands there) with fresh global state."""
    monkeypatch.chdir(tmp_path)
    yield
    from pybuda.config import _reset_global_compiler_config
    from buda_runtime_sim.runtime import shutdown

    shutdown()
    _reset_global_compiler_config()


def pytest_addoption(parser):
    parser.addoption("--conformance-all", action="store_true", default=False,
                     help="run every conformance case (tests/conformance), not just the default subset; "
                          "the same as TVM_BUDA_CONFORMANCE=all")
    parser.addoption("--generation-all", action="store_true", default=False,
                     help="generate with every causal-LM architecture on the device (tests/tvm_buda/generation), "
                          "not just a few; the same as TVM_BUDA_GENERATION=all")
