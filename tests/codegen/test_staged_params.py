"""Weights files written on a second thread while hashed: same bytes, moved into place, no leftovers."""

from dataclasses import replace

import numpy as np
import pytest
import torch

import codegen
import tvm_buda
from tests.models import MLP


@pytest.fixture(scope="module")
def graph():
    torch.manual_seed(0)
    compiled = tvm_buda.compile_model(MLP().eval(), (torch.randn(4, 64),), name="mlp")
    return compiled.subgraphs[0][1]


def test_staged_file_is_the_one_write_module_writes(graph, tmp_path):
    direct = codegen.write_module(graph, tmp_path / "direct", "header")
    with codegen.StagedParams([graph], tmp_path) as staged:
        digest = codegen.params_sha256(graph)
        moved = codegen.write_module(graph, tmp_path / "staged", "header", None, digest, staged.path(0))
    assert moved.params.read_bytes() == direct.params.read_bytes()
    assert moved.manifest.read_text() == direct.manifest.read_text() and codegen.verify(moved) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["direct", "staged"]  # the temporary name is gone


def test_files_not_moved_into_place_are_removed(graph, tmp_path):
    other = replace(graph, module_name="other", constants={"c": np.ones(3, np.float32)})
    with pytest.raises(RuntimeError, match="codegen failed"):
        with codegen.StagedParams([graph, other], tmp_path) as staged:
            staged.path(1)
            raise RuntimeError("codegen failed")
    assert list(tmp_path.iterdir()) == []


def test_bfloat16_weights_are_written_and_read_as_their_bytes(tmp_path, monkeypatch):
    """A bfloat16 model's weights go to the file tensor by tensor and come back as bfloat16 views of
    one buffer, readable by safetensors' own loader (not through safetensors.numpy.save_file, which
    builds the whole file in memory first)."""
    import ml_dtypes
    import safetensors.torch

    from codegen import artifacts

    def refused(*args, **kwargs):
        raise AssertionError("bfloat16 weights went through safetensors.numpy.save_file")

    monkeypatch.setattr(artifacts, "save_file", refused)
    tensors = {"w": np.random.default_rng(0).standard_normal((7, 33)).astype(ml_dtypes.bfloat16),
               "b": np.arange(5, dtype=np.float32)}
    path = tmp_path / "w.safetensors"
    artifacts.write_safetensors(tensors, path)
    back = artifacts.read_safetensors(path)
    assert back["w"].dtype == tensors["w"].dtype and back["w"].base is back["b"].base
    for name, value in tensors.items():
        assert np.array_equal(back[name].view(np.uint8), value.view(np.uint8))
    theirs = safetensors.torch.load_file(str(path))["w"]
    assert theirs.dtype == torch.bfloat16 and np.array_equal(theirs.view(torch.int16).numpy(), tensors["w"].view(np.int16))
