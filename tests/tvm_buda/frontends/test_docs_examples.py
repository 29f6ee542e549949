"""The examples in docs/frameworks.md run as written (one namespace, in order)."""

import re
from pathlib import Path

import pytest

import tvm_buda
from tvm_buda import modules

DOC = Path(__file__).resolve().parents[3] / "docs" / "frameworks.md"
WRAPPERS = ("PyTorchModule", "TFModule", "TFGraphDefModule", "JaxModule", "OnnxModule", "TFLiteModule")


@pytest.mark.slow
def test_framework_examples_run(tf, monkeypatch):
    pytest.importorskip("jax")
    pytest.importorskip("onnx")
    for name in WRAPPERS:  # until tvm_buda exports every wrapper itself
        monkeypatch.setattr(tvm_buda, name, getattr(modules, name), raising=False)
    namespace = {}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S):
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["logits"].shape == (2, 10)
