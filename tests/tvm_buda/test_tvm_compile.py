"""The TVM-native route: tvm.compile(mod, target="buda", relax_pipeline="buda") and tvm_buda.build."""

from pathlib import Path

import numpy as np
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

import tvm_buda
from tests.helpers import assert_matches_golden


@I.ir_module
class MatmulRelu:
    @R.function
    def main(x: R.Tensor((8, 64), "float32"), w: R.Tensor((64, 32), "float32")) -> R.Tensor((8, 32), "float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(y)
            R.output(z)
        return z


def _inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((8, 64), dtype=np.float32), rng.standard_normal((64, 32), dtype=np.float32)


def test_target_tag_and_pipeline_are_registered():
    assert tvm.target.Target("buda").kind.name == "llvm"
    assert "buda" in relax.pipeline.PIPELINE_MAP
    assert tvm.get_global_func("relax.ext.buda", allow_missing=True) is not None


def test_tvm_compile_with_buda_target_runs_device_subgraph():
    x, w = _inputs()
    ex = tvm.compile(MatmulRelu, target="buda", relax_pipeline="buda")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    out = vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()
    golden = np.maximum(x @ w, 0)
    assert_matches_golden(out, golden)
    assert not np.array_equal(out, golden), "device numerics (bfloat16) should differ from fp32 in the last bits"
    assert list(Path("generated_modules").glob("*/*.py")), "generated module file missing"


def test_build_with_params_keeps_weights_in_generated_module():
    x, w = _inputs()
    compiled = tvm_buda.build(MatmulRelu, params={"w": w}, name="matmul_relu")
    assert [s.name for s in compiled.imported.inputs] == ["x"]
    assert_matches_golden(compiled.run(x), np.maximum(x @ w, 0))
    source = next(Path("generated_modules").glob("matmul_relu_*/matmul_relu_0.py")).read_text()
    assert "self.w = pybuda.Parameter(64, 32" in source
    assert compiled.device_ops() == ["matmul", "nn.relu"]


def test_bound_constants_become_module_constants():
    x, w = _inputs()
    bb = relax.BlockBuilder()
    xv = relax.Var("x", relax.TensorType((8, 64), "float32"))
    with bb.function("main", [xv]):
        with bb.dataflow():
            y = bb.emit(relax.op.matmul(xv, relax.const(w)))
            z = bb.emit_output(relax.op.add(y, relax.const(np.float32(1.0))))
        bb.emit_func_output(z)
    compiled = tvm_buda.build(bb.get(), name="consts")
    assert_matches_golden(compiled.run(x), x @ w + 1.0)
    assert 'self.get_constant("const' in next(Path("generated_modules").glob("consts_*/consts_0.py")).read_text()
