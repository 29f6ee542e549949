"""Parametrise the conformance tests: the default subset, or every case with --conformance-all."""

from .selection import DEFAULT_ONNX, DEFAULT_TORCH, chosen, run_all


def pytest_generate_tests(metafunc):
    everything = run_all(metafunc.config)
    if "onnx_case" in metafunc.fixturenames:
        from . import onnx_suite

        cases = {c.id: c for c in onnx_suite.cases()}
        ids = chosen(list(cases), DEFAULT_ONNX, everything)
        metafunc.parametrize("onnx_case", [cases[i] for i in ids], ids=ids)
    if "torch_case" in metafunc.fixturenames:
        from . import torch_suite

        cases = {c.id: c for c in torch_suite.cases()}
        ids = chosen(list(cases), DEFAULT_TORCH, everything)
        metafunc.parametrize("torch_case", [cases[i] for i in ids], ids=ids)
