"""The cache key comes from what the model computes (its ops and weights), not its source file:
classes defined under `exec`, `python -c` or a notebook cell compile with the cache on and hit it."""

import json
import os
import subprocess
import sys

import torch

import tvm_buda
from tests.helpers import assert_matches_golden
from tests.models import golden

from .test_cache import _entries, _forbid_tracing_and_tvm

SOURCE = """
import torch

class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)

    def forward(self, x):
        return torch.{activation}(self.fc(x)) * {scale}
"""


def _exec_model(activation="relu", scale=2.0):
    namespace = {}
    exec(SOURCE.format(activation=activation, scale=scale), namespace)  # no file: inspect finds no source
    torch.manual_seed(0)
    return namespace["Scaled"]().eval()


def test_an_exec_defined_model_compiles_and_hits_the_cache(monkeypatch):
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    model, x = _exec_model(), torch.randn(8, 64)
    cold = tvm_buda.compile_model(model, (x,), name="scaled")
    assert cold.cache_key is not None and len(_entries()) == 1
    _forbid_tracing_and_tvm(monkeypatch)
    warm = tvm_buda.compile_model(model, (x,), name="scaled")
    assert warm.cache_key == cold.cache_key
    assert torch.equal(warm.run(x), cold.run(x))
    assert_matches_golden(warm.run(x), golden(model, x))


def test_a_different_forward_of_the_same_class_name_misses(monkeypatch):
    """Same class name, structure and weights; only forward() differs (what a re-run notebook cell
    does). A key without the source would hand back the first model's entry: a wrong result."""
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    x = torch.randn(8, 64)
    keys = set()
    for activation, scale in (("relu", 2.0), ("sigmoid", 2.0), ("relu", 3.0)):
        model = _exec_model(activation, scale)
        compiled = tvm_buda.compile_model(model, (x,), name="scaled")
        assert_matches_golden(compiled.run(x), golden(model, x))
        keys.add(compiled.cache_key)
    assert len(keys) == 3 and len(_entries()) == 3


CHILD = """
import json, torch, tvm, tvm_buda
builds, compile_fn = [], tvm.compile
tvm.compile = lambda *a, **k: builds.append(1) or compile_fn(*a, **k)
class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 8)
    def forward(self, x):
        return torch.relu(self.fc(x))
torch.manual_seed(0)
model, x = Tiny().eval(), torch.randn(4, 16)
compiled = tvm_buda.compile_model(model, (x,), name="tiny")
again = tvm_buda.compile_model(model, (x,), name="tiny")
with torch.no_grad():
    ref = model(x)
print(json.dumps({"builds": len(builds), "key": compiled.cache_key, "again": again.cache_key, "err": float((again.run(x) - ref).abs().max()),
                  "scale": float(ref.abs().max())}))
"""


def test_python_dash_c(tmp_path):
    env = {**os.environ, "PYBUDA_ENABLE_TVM_CACHE": "1"}
    runs = []
    for _ in range(2):  # the second process finds the first one's entry
        result = subprocess.run([sys.executable, "-c", CHILD], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        runs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    assert runs[0]["key"] == runs[0]["again"] == runs[1]["key"]
    assert [run["builds"] for run in runs] == [1, 0], "TVM builds once; every later compile hits the cache"
    for run in runs:
        assert run["err"] <= 0.1 * run["scale"]
    assert "unusable" not in result.stderr
