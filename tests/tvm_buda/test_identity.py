"""Every compiled model keeps its own generated code: same-shaped models compiled one after the
other in one directory (or by two processes) never swap functions, and a changed file on disk is
a clear error unless PYBUDA_RELOAD_GENERATED_MODULES=1 asks for the edit."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tvm_buda
from tests.helpers import assert_matches_golden


def _sequential(activation):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 64), activation, torch.nn.Linear(64, 32)).eval()


def _golden(model, x):
    with torch.no_grad():
        return model(x)


def test_same_shaped_models_keep_their_own_function():
    x = torch.randn(8, 64) * 3
    relu, tanh = _sequential(torch.nn.ReLU()), _sequential(torch.nn.Tanh())
    first = tvm_buda.compile_model(relu, (x,))
    second = tvm_buda.compile_model(tanh, (x,))
    assert first.name == second.name == "sequential"
    assert not set(first.generated_files) & set(second.generated_files), "the two compiles share files"
    assert_matches_golden(first.run(x), _golden(relu, x), "first model after the second was compiled")
    assert_matches_golden(second.run(x), _golden(tanh, x), "second model")


def test_same_model_recompiled_names_its_files_the_same():
    x = torch.randn(8, 64)
    model = _sequential(torch.nn.ReLU())
    a = tvm_buda.compile_model(model, (x,))
    b = tvm_buda.compile_model(model, (x,))
    assert a.generated_files == b.generated_files
    assert re.fullmatch(r"generated_modules/sequential_[0-9a-f]{8}/sequential_0\.py", str(a.generated_files[0]))
    assert torch.equal(a.run(x), b.run(x))


def test_edited_file_is_a_clear_error_without_the_reload_flag(monkeypatch):
    x = torch.randn(8, 64)
    model = _sequential(torch.nn.ReLU())
    compiled = tvm_buda.compile_model(model, (x,))
    source = compiled.generated_files[0]
    source.write_text(source.read_text().replace("pybuda.op.Relu(", "pybuda.op.Identity("))
    with pytest.raises(RuntimeError, match=f"{source.name}.*changed on disk.*PYBUDA_RELOAD_GENERATED_MODULES=1"):
        compiled.run(x)
    monkeypatch.setenv("PYBUDA_RELOAD_GENERATED_MODULES", "1")
    with torch.no_grad():
        without_relu = model[2](model[0](x))
    assert_matches_golden(compiled.run(x), without_relu, "the hand edit, picked up on request")


def test_deleted_generated_files_do_not_stop_a_compiled_model():
    x = torch.randn(8, 64)
    model = _sequential(torch.nn.Tanh())
    compiled = tvm_buda.compile_model(model, (x,))
    for path in compiled.generated_files:
        path.unlink()
    assert_matches_golden(compiled.run(x), _golden(model, x), "module held in memory")


SCRIPT = """
import json, sys, torch, tvm_buda
torch.manual_seed(0)
act = torch.nn.ReLU() if sys.argv[1] == "relu" else torch.nn.Tanh()
model = torch.nn.Sequential(torch.nn.Linear(64, 64), act, torch.nn.Linear(64, 32)).eval()
x = torch.randn(8, 64) * 3
compiled = tvm_buda.compile_model(model, (x,))
sys.stdin.readline()  # both processes have compiled before either runs
out = compiled.run(x)
with torch.no_grad():
    ref = model(x)
print(json.dumps({"err": float((out - ref).abs().max()), "scale": float(ref.abs().max())}))
"""


def test_two_processes_sharing_a_directory(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, act], cwd=tmp_path, env=dict(os.environ),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for act in ("relu", "tanh")]
    outs = [p.communicate("\n", timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        result = json.loads(out.strip().splitlines()[-1])
        assert result["err"] <= 0.1 * result["scale"], result
    assert len(list(Path(tmp_path, "generated_modules").glob("sequential_*/sequential_0.py"))) == 2
