"""Two processes compiling the same model at once both succeed and leave one valid entry."""

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys, torch, tvm_buda
from tvm_buda.demo_models import mlp
torch.manual_seed(0)
model, x = mlp(), torch.randn(8, 64)
compiled = tvm_buda.compile_model(model, (x,), name="mlp")
out = compiled.run(x)
with torch.no_grad():
    ref = model(x)
print(json.dumps({"err": float((out - ref).abs().max()), "scale": float(ref.abs().max()), "key": compiled.cache_key}))
"""


def test_two_processes_same_key(tmp_path):
    env = {**os.environ, "PYBUDA_ENABLE_TVM_CACHE": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    for r in results:
        assert r["err"] <= 0.1 * r["scale"]
    assert results[0]["key"] == results[1]["key"]
    cache_dir = tmp_path / "generated_modules/tvm_cache"
    files = sorted(p.name for p in cache_dir.iterdir() if not p.name.endswith(".lock"))
    assert files == [f"{results[0]['key']}.tti"], "exactly one entry, no leftover temporaries"
    from tvm_buda.cache import open_entry

    open_entry(cache_dir, results[0]["key"])  # raises if invalid
