"""ONNX conformance: onnx's own backend test data, run on onnxruntime, plain TVM and buda.

The cases are the model folders onnx ships (`pytorch-converted`, `pytorch-operator`, `simple`) and
its `light` CNNs, whose inputs are made the way onnx's runner makes them
(`Runner.generate_dummy_data(x, seed=0, random=False)`) and whose outputs are stored beside them.
onnxruntime and plain TVM are judged with onnx's own tolerances (rtol 1e-3, atol 1e-7); buda by
PyBuda's rule (allclose atol 0.1*max|golden| or PCC >= 0.99).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .results import CaseResult, run_column

FOLDERS = ("pytorch-converted", "pytorch-operator", "simple", "light")
ONNX_RTOL, ONNX_ATOL = 1e-3, 1e-7  # onnx.backend.test.case TestCase defaults


def data_root() -> Path:
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data"


@dataclass(frozen=True)
class OnnxCase:
    folder: str
    name: str
    model_path: Path

    @property
    def id(self) -> str:
        return f"{self.folder}/{self.name}"

    def load(self):
        """(model, inputs, expected outputs) as onnx's runner would feed and check them."""
        import onnx

        model = onnx.load(str(self.model_path))
        if self.folder == "light":
            inputs = light_inputs(model, self.name)
            prefix = str(self.model_path.with_suffix(""))
            expected = [_load_value(f"{prefix}_output_{i}.pb", o.type) for i, o in enumerate(model.graph.output)]
            return model, inputs, expected
        data = sorted(glob.glob(str(self.model_path.parent / "test_data_set_*")))[0]
        runtime_inputs = [i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
        n_in = len(glob.glob(os.path.join(data, "input_*.pb")))
        inputs = [_load_value(os.path.join(data, f"input_{i}.pb"), runtime_inputs[i].type) for i in range(n_in)]
        n_out = len(glob.glob(os.path.join(data, "output_*.pb")))
        expected = [_load_value(os.path.join(data, f"output_{i}.pb"), model.graph.output[i].type) for i in range(n_out)]
        return model, inputs, expected


def cases() -> list[OnnxCase]:
    root = data_root()
    found = []
    for folder in FOLDERS:
        if folder == "light":
            found += [OnnxCase(folder, p.stem, p) for p in sorted((root / folder).glob("*.onnx"))]
        else:
            found += [OnnxCase(folder, d.name, d / "model.onnx") for d in sorted((root / folder).iterdir())
                      if (d / "model.onnx").is_file()]
    return found


def light_inputs(model, name: str) -> list[np.ndarray]:
    from onnx.backend.test.runner import Runner

    initializers = {t.name for t in model.graph.initializer}
    return [Runner.generate_dummy_data(x, seed=0, name=name, random=False)
            for x in model.graph.input if x.name not in initializers]


def _load_value(path: str, type_proto):
    import onnx
    from onnx import numpy_helper

    with open(path, "rb") as f:
        content = f.read()
    if type_proto.HasField("sequence_type"):
        seq = onnx.SequenceProto()
        seq.ParseFromString(content)
        return numpy_helper.to_list(seq)
    tensor = onnx.TensorProto()
    tensor.ParseFromString(content)
    return numpy_helper.to_array(tensor)


# ---- columns ----------------------------------------------------------------------------------
def _assert_onnx_similar(expected, outputs) -> None:
    from onnx.backend.test.runner import Runner

    Runner.assert_similar_outputs(expected, list(outputs), rtol=ONNX_RTOL, atol=ONNX_ATOL)


def run_onnxruntime(case: OnnxCase) -> CaseResult:
    def body():
        import onnxruntime as ort

        model, inputs, expected = case.load()
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        _assert_onnx_similar(expected, session.run(None, dict(zip(names, inputs))))

    return run_column("onnxruntime", body)


def run_plain_tvm(case: OnnxCase) -> CaseResult:
    """TVM as its users run it: from_onnx, tvm.compile for llvm, the Relax VM."""

    def body():
        import tvm
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx

        model, inputs, expected = case.load()
        mod = from_onnx(model, {x.name: list(np.shape(v)) for x, v in zip(_runtime_inputs(model), inputs)})
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        result = vm["main"](*[tvm.runtime.tensor(np.asarray(v)) for v in inputs])
        _assert_onnx_similar(expected, _vm_outputs(result))

    return run_column("tvm", body)


def run_buda(case: OnnxCase) -> CaseResult:
    """compile_model on an OnnxModule, run on the simulator, PyBuda's rule per output."""
    share = {}

    def body():
        import tvm_buda

        model, inputs, expected = case.load()
        compiled = tvm_buda.compile_model(tvm_buda.OnnxModule(case.name, model), tuple(inputs))
        share["value"] = compiled.partition_summary().device_fraction
        outputs = compiled.run(*inputs)
        outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
        judge_pybuda(expected, outputs)

    result = run_column("buda", body)
    return result.with_share(share.get("value"))


def judge_pybuda(expected: list, outputs: list) -> None:
    """PyBuda's rule per output tensor (shape must match exactly, 0-d included)."""
    from buda_runtime_sim.verify import compare

    if len(outputs) != len(expected):
        raise AssertionError(f"{len(outputs)} outputs, expected {len(expected)}")
    for i, (out, ref) in enumerate(zip(outputs, expected)):
        out, ref = np.asarray(out), np.asarray(ref)
        if out.shape != ref.shape:
            raise AssertionError(f"output {i} has shape {out.shape}, expected {ref.shape}")
        if ref.dtype.kind == "f" and np.isnan(ref).any():  # sqrt/pow of negatives: NaN where the golden has NaN
            if not np.array_equal(np.isnan(out), np.isnan(ref)):
                raise AssertionError(f"output {i}: NaN at other positions than the golden's")
            out, ref = out[~np.isnan(ref)], ref[~np.isnan(ref)]
        result = compare(out, ref)
        if not result.passed:
            raise AssertionError(f"output {i}: {result}")


def _runtime_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [x for x in model.graph.input if x.name not in initializers]


def _vm_outputs(result) -> list:
    import tvm

    if isinstance(result, tvm.runtime.Tensor):
        return [result.numpy()]
    return [r.numpy() if isinstance(r, tvm.runtime.Tensor) else r for r in result]


COLUMNS = {"onnxruntime": run_onnxruntime, "tvm": run_plain_tvm, "buda": run_buda}
