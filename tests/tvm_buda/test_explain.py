"""tvm_buda.explain / CompiledModel.explain / `tvm-buda compile|run --explain`: the stage that fails
and the op it names; for a mismatch, every op's placement, shapes and formats and the first device
op whose output departs from the same program in float32 (PyBuda's VerifyConfig intermediates)."""

import pytest
import torch

import tvm_buda
from buda_runtime_sim.kernels import KERNELS, OpArgumentError
from relay_passes import pipeline as relay_pipeline
from tvm_buda import codegen_pass
from tvm_buda.cli import main


class Cancelling(torch.nn.Module):
    """(y + 1000) - 1000: exact in float32, nothing left of y in bfloat16 (its step at 1000 is 8)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 32)

    def forward(self, x):
        return torch.relu((self.lin(x) + 1000.0) - 1000.0) * 2.0


class Spectrum(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).real          # TVM's importer has no FFT


@pytest.fixture(scope="module")
def cancelling():
    torch.manual_seed(0)
    return Cancelling().eval(), torch.randn(4, 32)


@pytest.fixture(scope="module")
def compiled(cancelling, tmp_path_factory):
    model, x = cancelling
    config = tvm_buda.CompilerConfig()
    config.generated_modules_dir = str(tmp_path_factory.mktemp("explain") / "generated_modules")
    return tvm_buda.compile_model(model, (x,), config=config)


def test_a_mismatch_names_the_first_departing_op_with_shapes_formats_and_numbers(cancelling):
    model, x = cancelling
    report = tvm_buda.explain(model, (x,))
    assert report.error is None and report.stage == "run" and report.failed
    (out,) = report.outputs
    assert not out.passed and out.float32_passed                  # float32 matches the framework: numerics
    first = report.first_departure
    assert (first.placement, first.op_type, first.source_op) == ("device", "Subtract", "subtract")
    assert first.name.startswith("subtract") and first.program == "cancelling_0"
    assert first.input_shapes == [[4, 32], []] and first.output_shape == [4, 32]
    assert (first.output_df, first.accumulate_df, first.math_fidelity) == ("Float16_b", "Float16_b", "HiFi3")
    assert first.passed is False and first.pcc < 0.99 and first.max_error > first.atol
    before = report.ops[:report.ops.index(first)]
    assert before and all(op.passed for op in before)              # everything earlier matches float32
    assert "device's numerics" in report.verdict and first.name in report.verdict
    text = str(report)
    assert "first op departing" in text and f"cancelling_0/{first.name}" in text and "DEPARTS pcc=" in text


def test_a_lowering_error_is_told_apart_from_numerics(cancelling, compiled, monkeypatch):
    """A kernel that computes the wrong function misleads float32 too: not the device's numerics."""
    model, x = cancelling
    with torch.no_grad():
        golden = model(x)
    assert compiled.explain(x, golden=golden).outputs[0].float32_passed      # (numerics alone, as above)
    monkeypatch.setitem(KERNELS, "Relu", KERNELS["Abs"])
    report = compiled.explain(x, golden=golden)
    assert report.outputs[0].float32_passed is False
    assert "the import or the lowering" in report.verdict


def test_an_import_failure_names_the_stage_and_the_ops():
    report = tvm_buda.explain(Spectrum(), (torch.randn(4, 16),))
    assert report.stage == "import" and report.error_type == "ModelImportError"
    assert "_fft_r2c.default" in report.failing_ops and report.failed
    assert "FAILED at stage 'import'" in str(report)


def test_a_graph_pass_failure_names_the_stage_and_the_pass(cancelling, monkeypatch):
    model, x = cancelling

    def failing_pass():
        def run(mod):
            raise ValueError("relax.add cannot be folded")
        return run

    monkeypatch.setattr(relay_pipeline, "FoldConstants", failing_pass)
    report = tvm_buda.explain(model, (x,), run=False)
    assert report.stage == "graph passes" and "relax.add" in report.failing_ops
    assert "in graph pass fold_constant" in report.error


def test_a_codegen_failure_names_the_stage_and_the_op(cancelling, monkeypatch):
    model, x = cancelling

    def refuse(call, *args, **kwargs):
        raise ValueError("relax.subtract cannot be lowered here")

    monkeypatch.setattr(codegen_pass, "lower_call", refuse)
    report = tvm_buda.explain(model, (x,), run=False)
    assert report.stage == "codegen" and "relax.subtract" in report.failing_ops


def test_compile_only_lists_every_op_with_placement_shapes_and_formats(compiled):
    report = compiled.explain()
    assert report.stage == "build" and not report.failed and not report.outputs
    assert [op.op_type for op in report.ops] == ["Transpose", "Matmul", "Add", "Subtract", "Relu", "Multiply"]
    assert all(op.placement == "device" and op.output_df == "Float16_b" for op in report.ops)
    assert report.ops[1].input_shapes == [[4, 32], [32, 32], [32]] and report.ops[1].output_shape == [4, 32]


def test_a_run_failure_names_the_op(cancelling, compiled, monkeypatch):
    _, x = cancelling

    def broken(inputs, attrs, numerics):
        raise OpArgumentError("operandA", "is not what this kernel takes")

    monkeypatch.setitem(KERNELS, "Relu", broken)
    report = compiled.explain(x)
    assert report.stage == "run" and "operandA is not what this kernel takes" in report.error
    assert report.failing_ops and report.failing_ops[0].startswith("Relu 'relu")
    assert "the run failed at Relu" in report.verdict


def test_cli_explain(cancelling, tmp_path, capsys):
    model, x = cancelling
    torch.export.save(torch.export.export(model, (x,)), str(tmp_path / "cancel.pt2"))
    torch.export.save(torch.export.export(Spectrum(), (torch.randn(4, 16),)), str(tmp_path / "fft.pt2"))
    assert main(["run", str(tmp_path / "cancel.pt2"), "--explain"]) == 1
    out = capsys.readouterr().out
    assert "first op departing from the same program in float32: device cancel_0/subtract" in out
    assert "FAIL against the framework" in out and "Float16_b acc Float16_b HiFi3" in out
    assert main(["compile", str(tmp_path / "fft.pt2"), "--explain"]) == 1
    assert "FAILED at stage 'import'" in capsys.readouterr().out
