"""PYBUDA_RELOAD_GENERATED_MODULES: hand edits to generated modules change the next run."""

import pytest
import torch

import tvm_buda
from tests.helpers import assert_matches_golden
from tvm_buda.demo_models import mlp


def test_edit_and_reload_changes_the_output(monkeypatch):
    torch.manual_seed(0)
    model, x = mlp(), torch.randn(8, 64)
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    source = tvm_buda.compile_model(model, (x,), name="mlp").generated_files[0]  # generated_modules/mlp_<hash>/mlp_0.py
    assert source.name == "mlp_0.py"
    text = source.read_text()
    assert "pybuda.op.Relu(" in text
    source.write_text(text.replace("pybuda.op.Relu(", "pybuda.op.Identity("))  # drop the activation

    monkeypatch.setenv("PYBUDA_RELOAD_GENERATED_MODULES", "1")
    import tvm

    monkeypatch.setattr(tvm, "compile", lambda *a, **k: pytest.fail("TVM ran during a reload"))
    reloaded = tvm_buda.compile_model(model, (x,), name="mlp")
    with torch.no_grad():
        without_relu = model.fc2(model.fc1(x))
        with_relu = model(x)
    out = reloaded.run(x)
    assert_matches_golden(out, without_relu)
    assert (out - with_relu).abs().max() > 0.1, "the edit had no effect"
    assert "pybuda.op.Identity(" in source.read_text(), "reload must not overwrite the user's edit"


def test_reload_without_previous_compile_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PYBUDA_RELOAD_GENERATED_MODULES", "1")
    with pytest.raises(RuntimeError, match="compile it once with PYBUDA_ENABLE_TVM_CACHE=1"):
        tvm_buda.compile_model(mlp(), (torch.randn(8, 64),), name="mlp")
