import json
import re

import pytest
import torch

import tvm_buda


class Block(torch.nn.Module):
    """Linear -> GELU -> LayerNorm -> Linear, with a cumsum the device leaves to the host."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.norm = torch.nn.LayerNorm(128)
        self.fc2 = torch.nn.Linear(128, 32)

    def forward(self, x):
        h = self.norm(torch.nn.functional.gelu(self.fc1(x)))
        return torch.cumsum(self.fc2(h), dim=-1)


def read_js(path, name: str):
    text = path.read_text()
    match = re.fullmatch(rf"window\.{name} = (.*);\n", text, flags=re.S)
    assert match, f"{path} is not a {name} data file"
    return json.loads(match.group(1))


@pytest.fixture(scope="session")
def report_root(tmp_path_factory):
    """One compile with Reportify on, shared by the report tests."""
    root = tmp_path_factory.mktemp("reportify")
    mp = pytest.MonkeyPatch()
    mp.setenv("PYBUDA_REPORTIFY", "1")
    mp.setenv("PYBUDA_REPORTIFY_DIR", str(root))
    mp.chdir(tmp_path_factory.mktemp("work"))
    try:
        torch.manual_seed(0)
        tvm_buda.compile_model(tvm_buda.PyTorchModule("block", Block().eval()), (torch.randn(4, 64),))
    finally:
        mp.undo()
    return root
