"""What a Reportify report holds after one compile: the index row, every pass that changed the
graph, the partition, the generated module with formats and cycles, placement and perf."""

from tests.tvm_buda.reports.conftest import read_js


def test_index_lists_the_compilation(report_root):
    index = read_js(report_root / "index_data.js", "REPORTIFY_INDEX")
    assert len(index) == 1
    row = index[0]
    assert row["model"] == "block" and row["framework"] == "pytorch"
    assert 0 < row["device_share"] < 1 and row["graph_breaks"] >= 1 and row["samples_per_second"] > 0
    for page in ("index.html", "model.html", "reportify.js", "vendor/cytoscape.min.js", "vendor/cytoscape-dagre.min.js"):
        assert (report_root / page).is_file()
    assert "https://" not in (report_root / "model.html").read_text()   # nothing loads from a CDN


def test_passes_partition_and_module(report_root):
    row = read_js(report_root / "index_data.js", "REPORTIFY_INDEX")[0]
    data = read_js(report_root / "models" / row["id"] / "data.js", "REPORTIFY_MODEL")
    names = [p["name"] for p in data["passes"]]
    assert names[0] == "initial_graph" and "post_partition" in names
    from relay_passes import buda_pass_pipeline

    recorded = names[1:names.index("post_partition")]
    assert recorded and set(recorded) <= set(buda_pass_pipeline().names)   # only passes that changed main
    module = next(p for p in data["passes"] if p["kind"] == "module")
    kinds = {n["kind"] for n in module["graph"]["nodes"]}
    assert {"input", "parameter", "op", "output"} <= kinds
    ops = [n for n in module["graph"]["nodes"] if n["kind"] == "op"]
    layernorm = next(n for n in ops if n["meta"]["pybuda_op"] == "nn.Layernorm")
    assert layernorm["meta"]["relax_op"] == "nn.layer_norm"
    assert layernorm["meta"]["data_format"] == "Float16_b" and layernorm["meta"]["placement"] == "device"
    assert any("estimated_cycles" in n["meta"] for n in ops)
    ids = {n["id"] for n in module["graph"]["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in module["graph"]["edges"])
    partition = next(p for p in data["passes"] if p["name"] == "post_partition")
    placements = {n["meta"].get("placement") for n in partition["graph"]["nodes"] if n["kind"] == "op"}
    assert placements == {"device", "host"}           # cumsum stays on the host
    initial = data["passes"][0]["graph"]
    weights = [n for n in initial["nodes"] if n["kind"] == "parameter"]
    assert len(weights) == 6 and all(n["meta"]["shape"] for n in weights)   # fc1, norm, fc2: weight + bias each


def test_placement_and_perf(report_root):
    row = read_js(report_root / "index_data.js", "REPORTIFY_INDEX")[0]
    data = read_js(report_root / "models" / row["id"] / "data.js", "REPORTIFY_MODEL")
    epoch = data["placement"][0]
    rows, cols = epoch["grid"]
    assert rows > 0 and cols > 0 and epoch["ops"]
    for op in epoch["ops"]:
        assert op["row"] + op["grid"][0] <= rows and op["col"] + op["grid"][1] <= cols
    names = {op["name"] for op in epoch["ops"]}
    assert epoch["edges"] and all(a in names and b in names for a, b in epoch["edges"])
    assert "samples/s" in data["perf"]["summary"] and data["perf"]["ops"]


def test_newest_first_and_bounded(report_root, tmp_path):
    import json

    from tvm_buda.reports import writer

    index = json.loads((report_root / "index.json").read_text())
    assert [r["id"] for r in index] == sorted((r["id"] for r in index), reverse=True)
    assert writer.MAX_INDEX >= 50
