"""Sweep planning without a cluster: model references, job keys, tiny transformers configs, the
result store, the table and the report files, the command line's early errors."""

import csv
import json
import shutil
from pathlib import Path

import pytest

from tvm_buda.cli import main
from tvm_buda.sweep import SweepTable, plan
from tvm_buda.sweep.models import catalogue, expand_models
from tvm_buda.sweep.report import write_report
from tvm_buda.sweep.store import ResultStore

MODELS = Path(__file__).parent / "models"


def test_jobs_are_every_combination_with_keys_that_follow_content_not_paths(tmp_path):
    requests = plan(["mlp", str(MODELS / "raises.py")], "Float16_b,Bfp8_b", ["LoFi", "HiFi4"], "wh_n150,gs_e150",
                    out=tmp_path)
    assert len(requests) == 16 and len({r["key"] for r in requests}) == 16
    assert all(json.loads(json.dumps(r)) == r for r in requests)   # plain JSON, nothing else
    assert requests[0]["row"] == {"model": "mlp", "data_format": "Float16_b", "fidelity": "LoFi",
                                  "device_config": "wh_n150", "tvm_buda": requests[0]["row"]["tvm_buda"]}
    assert plan(["mlp"], out=tmp_path / "elsewhere")[0]["key"] == plan(["mlp"], out=tmp_path)[0]["key"]

    moved = tmp_path / "a" / "raises.py"
    moved.parent.mkdir()
    shutil.copy(MODELS / "raises.py", moved)
    original, copy = plan([str(MODELS / "raises.py")], out=tmp_path), plan([str(moved)], out=tmp_path)
    assert original[0]["key"] == copy[0]["key"]       # the same file anywhere on the cluster
    moved.write_text(moved.read_text() + "\n# edited\n")
    assert plan([str(moved)], out=tmp_path)[0]["key"] != original[0]["key"]


def test_hf_models_are_tiny_and_a_config_file_changes_the_key(tmp_path):
    from tvm_buda.sweep.hf_models import build, tiny_config

    config = tiny_config("bert")
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads, config.vocab_size) == \
        (64, 2, 4, 1024)
    gemma = tiny_config("gemma3_text")   # per-layer lists follow the layer count
    assert gemma.num_hidden_layers == 2 and len(gemma.layer_types) == 2
    model, inputs = build("bert")
    assert tuple(model(*inputs).shape) == (1, 32, 64)
    # key/value heads keep the real config's grouping: equal to the query heads for multi-head and
    # latent attention (GLM-4-MoE-Lite's keys are expanded per query head), the same ratio for GQA
    assert (tiny_config("glm4_moe_lite").num_key_value_heads, tiny_config("llama").num_key_value_heads) == (4, 4)
    assert tiny_config("mistral").num_key_value_heads == 1          # 32 query heads over 8 key/value heads

    path = tmp_path / "bert.json"
    path.write_text(json.dumps({"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                                "intermediate_size": 64, "vocab_size": 100}))
    from_file = plan([f"hf:bert@{path}"], out=tmp_path)[0]
    assert from_file["row"]["model"] == "hf:bert@bert.json"
    path.write_text(json.dumps({"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                                "intermediate_size": 64, "vocab_size": 100}))
    assert plan([f"hf:bert@{path}"], out=tmp_path)[0]["key"] != from_file["key"]
    assert plan(["hf:bert"], out=tmp_path)[0]["key"] != from_file["key"]


def test_catalogues_and_unknown_models_are_checked_before_anything_runs():
    transformers = catalogue("transformers")
    assert len(transformers) >= 50 and all(m.startswith("hf:") for m in transformers)
    assert catalogue("transformers[::10]") == transformers[::10]
    assert expand_models(["catalogue:demo", "mlp"]) == catalogue("demo")   # duplicates dropped
    with pytest.raises(ValueError, match="unknown catalogue 'nope'.*transformers"):
        catalogue("nope")
    with pytest.raises(ValueError, match="unknown model 'mpl'.*mlp"):
        expand_models(["mpl"])
    with pytest.raises(ValueError, match="hf:no_such_type: transformers has no model type"):
        plan(["hf:no_such_type"])


def test_store_is_atomic_and_ignores_unreadable_results(tmp_path):
    store = ResultStore(tmp_path)
    store.write("k1", {"key": "k1", "status": "PASS", "pcc": 0.999})
    assert store.read("k1") == {"key": "k1", "status": "PASS", "pcc": 0.999}
    assert [p.name for p in store.job_dir("k1").iterdir()] == ["result.json"]   # no temporary file left
    store.result_path("k1").write_text('{"key": "k1", "sta')                     # a torn file from elsewhere
    assert store.read("k1") is None
    assert store.read("missing") is None


ROWS = [
    {"model": "mlp", "data_format": "Float16_b", "fidelity": "LoFi", "device_config": "wh_n150", "status": "PASS",
     "pcc": 0.9997, "max_abs_error": 0.03, "samples_per_second": 2.2e6, "key": "a"},
    {"model": "mlp", "data_format": "Bfp8_b", "fidelity": "HiFi4", "device_config": "gs_e150", "status": "FAIL",
     "pcc": 0.95, "max_abs_error": 0.4, "samples_per_second": 1.1e6, "key": "b"},
    {"model": "raises.py", "data_format": "Float16_b", "fidelity": "HiFi4", "device_config": "wh_n150",
     "status": "ERROR", "stage": "build", "error": "RuntimeError: a, \"quoted\"", "key": "c"},
]


def test_table_and_report_files(tmp_path):
    table = SweepTable(ROWS)
    assert table.summary() == {"PASS": 1, "FAIL": 1, "ERROR": 1}
    assert table.where(fidelity="HiFi4").column("model") == ["mlp", "raises.py"]
    index = write_report(tmp_path, ROWS, total=4)
    assert index == tmp_path / "index.html" and (tmp_path / "sweep.js").is_file()
    assert (tmp_path / "reportify.css").is_file()
    with open(tmp_path / "results.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["model"], r["status"], r["pcc"], r["error"]) for r in rows] == \
        [("mlp", "PASS", "0.9997", ""), ("mlp", "FAIL", "0.95", ""), ("raises.py", "ERROR", "", ROWS[2]["error"])]
    data = json.loads((tmp_path / "data.js").read_text().removeprefix("window.SWEEP = ").rstrip(";\n"))
    assert data["total"] == 4 and data["summary"] == {"PASS": 1, "FAIL": 1, "ERROR": 1}
    assert [r["key"] for r in data["rows"]] == ["a", "b", "c"]
    html = (tmp_path / "index.html").read_text()
    assert "http" not in html.replace("http-equiv", "")   # nothing from a CDN


def test_cli_rejects_bad_names_before_starting_anything(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", "mlp", "--formats", "Float17", "--out", str(out)]) == 1
    assert "unknown DataFormat 'Float17'" in capsys.readouterr().err
    assert main(["sweep", "mlp", "--device-config", "wh_n999", "--out", str(out)]) == 1
    assert "unknown device config 'wh_n999'" in capsys.readouterr().err
    assert not out.exists()
