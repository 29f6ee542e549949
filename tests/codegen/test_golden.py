"""Golden files for generated PyBuda modules: the source users read and edit must not drift silently.

After an intended change to codegen, accept the new output with
    UPDATE_GOLDEN=1 python -m pytest tests/codegen/test_golden.py
and review the diff of tests/codegen/golden/ like any other change.
"""

import os
from pathlib import Path

import pytest
import torch

import tvm_buda
from tvm_buda.demo_models import bert_encoder_hidden, mlp

GOLDEN = Path(__file__).parent / "golden"


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(torch.relu(self.conv(x))), 1))


MODELS = {
    "mlp": (mlp, (8, 64)),
    "cnn": (lambda: SmallCNN().eval(), (2, 3, 16, 16)),
    "bert_encoder": (bert_encoder_hidden, (1, 128, 768)),
}


def _generated_source(name: str) -> str:
    build, shape = MODELS[name]
    torch.manual_seed(0)
    compiled = tvm_buda.compile_model(build(), (torch.randn(*shape),), name=name)
    sources = [p for p in compiled.generated_files if p.suffix == ".py"]
    return "".join(f"# ==== {p.name} ====\n{p.read_text()}" for p in sources)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_generated_source_matches_golden(name):
    text = _generated_source(name)
    golden = GOLDEN / f"{name}.py.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(text)
    assert golden.exists(), f"missing {golden}; create it with UPDATE_GOLDEN=1"
    expected = golden.read_text()
    assert text == expected, (
        f"generated source for {name} differs from {golden.name}; if the change is intended, run "
        "UPDATE_GOLDEN=1 python -m pytest tests/codegen/test_golden.py and review the diff"
    )
