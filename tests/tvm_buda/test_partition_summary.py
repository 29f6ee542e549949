"""The partition report: steps in execution order, graph breaks, device share, dot picture."""

import torch

import tvm_buda
from tests.models import MLP, EmbeddingCumsum


def test_summary_of_a_host_device_host_model():
    compiled = tvm_buda.compile_model(EmbeddingCumsum(), (torch.randint(0, 100, (2, 7)),), name="emb")
    summary = compiled.partition_summary()
    kinds = [s.kind for s in summary.steps]
    assert kinds == ["host", "host", "host", "device", "host"]
    assert [s.op for s in summary.steps if s.kind == "host"] == ["astype", "reshape", "take", "cumsum"]
    assert summary.graph_breaks == 2 and summary.num_device_subgraphs == 1
    assert 0.5 < summary.device_fraction < 1.0
    text = str(summary)
    assert "graph breaks: 2" in text and "DEVICE emb_0" in text
    assert summary.steps[3].inputs_from == [2], "device step reads the embedding output"


def test_dot_picture_colours_device_and_host(tmp_path):
    compiled = tvm_buda.compile_model(EmbeddingCumsum(), (torch.randint(0, 100, (2, 7)),), name="emb")
    dot = compiled.partition_summary().to_dot()
    assert dot.startswith("digraph partition {")
    assert dot.count("#9fd89f") == 1 and dot.count("#d9d9d9") == 4
    assert "s2 -> s3;" in dot and "s3 -> s4;" in dot
    written = compiled.partition_summary().write_graph(tmp_path / "partition")
    assert written.exists() and (tmp_path / "partition.dot").read_text() == dot


def test_all_device_model_has_no_graph_breaks():
    compiled = tvm_buda.compile_model(MLP(), (torch.randn(4, 64),))
    assert compiled.graph_breaks == 0 and compiled.partition_summary().device_fraction == 1.0
