"""onnx's own backend test runner (onnx.backend.test.BackendTest) against tvm_buda.onnx_backend.

Run at Float32/HiFi4 with rtol = atol = 1e-2 (onnx's own 1e-3/1e-7 assume IEEE float32 products;
the device's HiFi4 multiplies keep fewer mantissa bits, see shared numerics spec). Default:
a few cases of each folder; --conformance-all: every case of pytorch-converted, pytorch-operator,
simple and the light CNNs ("real" in onnx's runner), and any failure must be one plain TVM has too.
"""

import unittest

import numpy as np
import pytest

import pybuda
from tvm_buda import onnx_backend

from . import onnx_suite
from .selection import run_all

onnx = pytest.importorskip("onnx")
pytestmark = pytest.mark.conformance

TOLERANCE = 1e-2
DEFAULT_TESTS = ("test_Linear_cpu", "test_PReLU_1d_cpu", "test_operator_addmm_cpu", "test_single_relu_model_cpu")
FOLDER_CATEGORIES = tuple(f"OnnxBackend{c}Test" for c in ("PyTorchConvertedModel", "PyTorchOperatorModel",
                                                             "SimpleModel", "RealModel"))


def _exact_numerics():
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32, accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4)


def _run(patterns) -> unittest.TestResult:
    from onnx.backend.test import BackendTest

    tolerance = {"rtol": TOLERANCE, "atol": TOLERANCE}
    names = [c.name if c.folder != "light" else "test_" + c.name.removeprefix("light_") for c in onnx_suite.cases()]
    runner = BackendTest(onnx_backend.backend_class(), __name__, test_kwargs={n: tolerance for n in names})
    for pattern in patterns:
        runner.include(pattern)
    suite = unittest.TestSuite()
    for category in FOLDER_CATEGORIES:
        if category in runner.test_cases:
            suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(runner.test_cases[category]))
    result = unittest.TestResult()
    suite.run(result)
    return result


def test_backend_functions_and_class():
    from onnx.backend.base import Backend

    cls = onnx_backend.backend_class()
    assert issubclass(cls, Backend)
    assert cls.supports_device("CPU") and not cls.supports_device("CUDA")
    case = next(c for c in onnx_suite.cases() if c.name == "test_single_relu_model")
    model, inputs, expected = case.load()
    _exact_numerics()
    (out,) = onnx_backend.run_model(model, inputs)
    np.testing.assert_allclose(out, expected[0], rtol=TOLERANCE, atol=TOLERANCE)
    with pytest.raises(ValueError, match="device 'CUDA' is not supported"):
        onnx_backend.prepare(model, "CUDA")


def test_onnx_backend_test_runner(request, monkeypatch, tmp_path):
    monkeypatch.setenv("ONNX_HOME", str(tmp_path / "onnx_home"))  # where the runner writes light inputs
    _exact_numerics()
    everything = run_all(request.config)
    result = _run([".*"] if everything else [f"^{t}$" for t in DEFAULT_TESTS])
    ran = result.testsRun - len(result.skipped)  # not included, or the CUDA variant
    assert ran >= (100 if everything else len(DEFAULT_TESTS))
    failed = {test.id().rsplit(".", 1)[-1]: text.strip().splitlines()[-1] for test, text in result.failures + result.errors}
    if everything:  # failures plain TVM shares are not ours
        failed = {t: why for t, why in failed.items() if onnx_suite.run_plain_tvm(_case_for(t)).passed}
    assert not failed, failed


def _case_for(test_name: str) -> onnx_suite.OnnxCase:
    """onnx's runner names a case test_<folder name>_cpu, a light model test_<name without light_>_cpu."""
    cases = {c.name: c for c in onnx_suite.cases()}
    name = test_name.removesuffix("_cpu")
    return cases.get(name) or cases["light_" + name.removeprefix("test_")]
