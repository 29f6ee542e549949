"""perf_report on compiled models: rows, settings from CompilerConfig, graph breaks, report files."""

import json

import pytest
import torch

import tvm_buda
from buda_runtime_sim.config import CompilerConfig
from buda_runtime_sim.dataformat import DataFormat, MathFidelity
from tvm_buda.demo_models import mlp
from tvm_buda.perf_report import op_graph, perf_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def compile_mlp(tmp_path, name="mlp", **config):
    """A math-heavy MLP (256 x 512 -> 1024 -> 512), compiled at batch 256."""
    torch.manual_seed(0)
    cfg = CompilerConfig(generated_modules_dir=str(tmp_path / name), **config)
    return tvm_buda.compile_model(mlp(512, 1024, 512), (torch.randn(256, 512),), config=cfg, name=name)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compile_mlp(tmp_path_factory.mktemp("perf"))


def test_rows_name_grid_tiles_format_fidelity_and_cycles(compiled):
    report = perf_report(compiled, "wh_n150")
    row = report.op("fc1_matmul")
    assert row.op_type == "Matmul" and row.grid is not None and row.cycles > 0
    assert row.tiles == 1 * (1024 // 32)              # one sample's row (padded to a tile) x 1024 columns
    assert (row.data_format, row.math_fidelity) == ("Float16_b", "HiFi3")    # CompilerConfig defaults
    assert report.op("fc1_transpose").kind == "folded"                         # weight transpose, compile time
    assert report.samples_per_run == 1 and report.microbatch == 256 and report.runs == 256   # the batch streams
    assert report.epochs and report.samples_per_second > 0 and 0 < report.math_utilisation < 1
    text = str(report)
    assert "fc1_matmul" in text and "wh_n150" in text and "samples/s" in text


def test_the_compiled_batch_streams_one_sample_at_a_time(tmp_path):
    """A microbatch is priced as that many one-sample runs whatever batch the model was compiled for
    (PyBuda's netlists hold per-sample shapes), so a batch-1 compile prices any microbatch."""
    torch.manual_seed(0)
    model = mlp(256, 512, 128)
    one, eight = (tvm_buda.compile_model(model, (torch.randn(batch, 256),), name=f"b{batch}",
                                         config=CompilerConfig(generated_modules_dir=str(tmp_path / f"b{batch}")))
                  for batch in (1, 8))
    for microbatch in (8, 64):
        at_one, at_eight = perf_report(one, "wh_n150", microbatch), perf_report(eight, "wh_n150", microbatch)
        assert at_one.runs == at_eight.runs == microbatch
        assert at_eight.samples_per_second == pytest.approx(at_one.samples_per_second, rel=1e-9)
        assert [(r.name, r.tiles, r.cycles) for r in at_eight.ops] == [(r.name, r.tiles, r.cycles) for r in at_one.ops]
    assert op_graph(eight).transfers[0].shape == (8, 256)                  # the compiled shapes, when asked
    assert op_graph(eight, per_sample=True).transfers[0].shape == (1, 256)


def test_lofi_is_never_slower_than_hifi4(tmp_path):
    lofi = perf_report(compile_mlp(tmp_path, "lofi", default_math_fidelity=MathFidelity.LoFi))
    hifi4 = perf_report(compile_mlp(tmp_path, "hifi4", default_math_fidelity=MathFidelity.HiFi4))
    assert lofi.op("fc1_matmul").math_fidelity == "LoFi" and hifi4.op("fc1_matmul").math_fidelity == "HiFi4"
    assert lofi.samples_per_second > hifi4.samples_per_second
    assert lofi.op("fc1_matmul").math_cycles <= hifi4.op("fc1_matmul").math_cycles


def test_fidelity_from_set_configuration_options():
    from buda_runtime_sim.options import set_configuration_options

    set_configuration_options(math_fidelity=MathFidelity.LoFi)      # generated files land in this test's tmp dir
    torch.manual_seed(0)
    model = tvm_buda.compile_model(mlp(), (torch.randn(4, 64),))
    assert {r.math_fidelity for r in perf_report(model).ops} == {"LoFi"}


def test_bfp8_moves_fewer_bytes_than_float16(tmp_path):
    bfp8 = perf_report(compile_mlp(tmp_path, "bfp8", default_df_override=DataFormat.Bfp8_b))
    fp16 = perf_report(compile_mlp(tmp_path, "fp16", default_df_override=DataFormat.Float16))
    assert sum(t.bytes for t in bfp8.transfers) < sum(t.bytes for t in fp16.transfers)
    assert bfp8.transfer_seconds < fp16.transfer_seconds
    assert bfp8.samples_per_second >= fp16.samples_per_second


def test_more_graph_breaks_never_make_a_model_faster(tmp_path, compiled):
    broken = compile_mlp(tmp_path, "broken", cpu_fallback_ops={"nn.relu"})
    assert broken.graph_breaks > compiled.graph_breaks
    whole, split = perf_report(compiled), perf_report(broken)
    assert split.graph_breaks == broken.graph_breaks
    assert len(split.transfers) > len(whole.transfers)
    assert split.samples_per_second < whole.samples_per_second
    placed = {o.name.split(".")[0] for o in split.ops if o.grid}
    assert "broken_0" in placed and placed <= {"broken_0", "broken_1"}                  # qualified per subgraph


def test_placement_settings_come_from_compiler_config(tmp_path):
    model = compile_mlp(tmp_path, "placed", op_size_overrides={"fc1_matmul": (2, 3)}, epoch_breaks=["fc2_matmul"],
                        device_config="gs_e150", harvested_rows=[1, 11])
    report = perf_report(model)
    assert report.board.name == "gs_e150" and report.board.grid_shape == (8, 12)
    assert report.op("fc1_matmul").grid == (2, 3)
    assert report.op("fc2_matmul").epoch == report.op("fc1_matmul").epoch + 1
    # keywords override the config
    assert perf_report(model, "wh_n150", harvested_rows=[]).board.grid_shape == (10, 8)


def test_microbatch_scales_runs(compiled):
    one, four = perf_report(compiled), perf_report(compiled, microbatch=1024)
    assert (one.runs, four.runs) == (256, 1024)              # one run per sample (the compiled batch is 256)
    assert four.samples_per_second > one.samples_per_second   # switch and fill amortised


def test_report_files_are_well_formed(compiled, tmp_path):
    report = perf_report(compiled, "wh_n300")
    data = json.loads(report.to_json(tmp_path / "out" / "report.json").read_text())
    assert data["board"]["name"] == "wh_n300" and data["ops"] and data["epochs"]
    assert data["samples_per_second"] == pytest.approx(report.samples_per_second)
    paths = report.plot(tmp_path / "pics" / "mlp.png")
    assert len(paths) == len(report.epochs)
    for path in paths:
        assert path.name.startswith("mlp_epoch") and path.read_bytes()[:8] == PNG_MAGIC
    assert all(p.read_bytes()[:8] == PNG_MAGIC for p in report.plot(tmp_path / "dir"))
    saved = report.save(tmp_path / "saved")          # what `tvm-buda report` writes
    assert saved[0].name == "mlp_perf.json" and json.loads(saved[0].read_text())["model"] == "mlp"
    assert [p.suffix for p in saved[1:]] == [".png"] * len(report.epochs)


def test_op_graph_reads_only_static_shapes(compiled):
    graph = op_graph(compiled)
    assert [t.direction for t in graph.transfers] == ["h2d", "d2h"]
    assert graph.transfers[0].shape == (256, 512)
    assert all(op.output_shape for op in graph.ops)
