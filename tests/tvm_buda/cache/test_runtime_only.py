"""A cache hit runs on TVM's runtime alone: `import tvm_buda` and a warm compile_model + run never
import TVM's compiler (`import tvm`, most of a warm start's own time), while a miss, `tvm_buda.build`
and a plain `tvm.compile(target="buda")` still find the "buda" target whichever was imported first (relay_passes and codegen too)."""

import json
import os
import subprocess
import sys

WARM = """
import json, sys, torch, tvm_buda
from tvm_buda.demo_models import mlp
after_import = "tvm" in sys.modules
torch.manual_seed(0)
model, x = mlp(), torch.randn(8, 64)
compiled = tvm_buda.compile_model(model, (x,), name="mlp")
out = compiled.run(x)
with torch.no_grad():
    ref = model(x)
print(json.dumps({"after_import": after_import, "after_run": "tvm" in sys.modules, "key": compiled.cache_key,
                  "err": float((out - ref).abs().max()), "scale": float(ref.abs().max())}))
"""


def _child(code: str, cwd, **env):
    script = cwd / "script.py"    # a file: TVMScript reads its source
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], cwd=cwd, env={**os.environ, **env}, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_hit_never_imports_the_compiler(tmp_path):
    cold = _child(WARM, tmp_path, PYBUDA_ENABLE_TVM_CACHE="1")
    warm = _child(WARM, tmp_path, PYBUDA_ENABLE_TVM_CACHE="1")
    assert not cold["after_import"] and cold["after_run"], "a miss compiles with TVM"
    assert not warm["after_import"] and not warm["after_run"], "a hit must not import TVM's compiler"
    assert warm["key"] == cold["key"]
    for run in (cold, warm):
        assert run["err"] <= 0.1 * run["scale"]


PLAIN = """
import json, sys
{imports}
from tvm import relax
from tvm.script import relax as R

@tvm.script.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            y = R.nn.relu(x)
            R.output(y)
        return y

import numpy as np
executable = tvm.compile(Module, target="buda", relax_pipeline="buda")
vm = relax.VirtualMachine(executable, tvm.cpu())
x = np.random.default_rng(0).standard_normal((4, 8)).astype("float32")
out = vm["main"](tvm.runtime.tensor(x)).numpy()
print(json.dumps({{"ok": bool(np.allclose(out, np.maximum(x, 0), atol=0.05))}}))
"""


def test_plain_tvm_compile_finds_buda_in_either_import_order(tmp_path):
    # `import relay_passes` (or codegen) first imports tvm while our package is half-imported: the
    # registration then must not import any of our modules
    for imports in ("import tvm_buda\nimport tvm", "import tvm\nimport tvm_buda",
                    "import relay_passes\nimport tvm_buda\nimport tvm", "import codegen\nimport tvm_buda\nimport tvm",
                    # an availability check before the import finds the hook too
                    "import tvm_buda, importlib.util\nimportlib.util.find_spec('tvm')\nimport tvm"):
        assert _child(PLAIN.format(imports=imports), tmp_path)["ok"], imports
