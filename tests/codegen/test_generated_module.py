"""Generated modules are real, importable PyBuda source files with their weights beside them."""

import json
import subprocess
import sys

import torch
from safetensors.numpy import load_file

import tvm_buda
from tests.models import MLP


def test_generated_module_is_a_pybuda_module_importable_on_its_own(tmp_path):
    torch.manual_seed(0)
    model = MLP().eval()
    compiled = tvm_buda.compile_model(model, (torch.randn(4, 64),), name="mlp")
    sources = [p for p in compiled.generated_files if p.suffix == ".py"]
    assert len(sources) == 1 and sources[0].exists()
    text = sources[0].read_text()
    assert "import pybuda" in text
    assert "class Mlp0(pybuda.PyBudaModule):" in text
    assert "pybuda.op.Matmul(" in text and "pybuda.op.Relu(" in text
    assert text.count("pybuda.op.Matmul(") == 2

    params = load_file(str(sources[0].with_suffix(".safetensors")))
    assert torch.equal(torch.from_numpy(params["fc1_weight"]), model.fc1.weight.detach())
    manifest = json.loads(sources[0].with_suffix(".json").read_text())
    assert manifest["class_name"] == "Mlp0"

    script = (
        "import importlib.util, sys, pybuda\n"
        f"spec = importlib.util.spec_from_file_location('gen', {str(sources[0])!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "assert issubclass(mod.Mlp0, pybuda.PyBudaModule)\n"
        "m = mod.Mlp0(); print(sorted(p.get_name() for p in m.get_parameters()))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "fc1_weight" in result.stdout


def test_identical_subgraphs_share_one_module():
    class Twice(torch.nn.Module):
        def forward(self, x):  # cumprod has no device kernel: two identical device regions around it
            x = torch.cumprod(torch.relu(x) * 0.5 + 1.0, dim=1)
            return torch.cumprod(torch.relu(x) * 0.5 + 1.0, dim=1)

    model, x = Twice(), torch.randn(4, 8)
    compiled = tvm_buda.compile_model(model, (x,), name="twice")
    steps = compiled.partition_summary().steps
    assert [s.op for s in steps if s.kind == "device"] == ["twice_0", "twice_0"]
    assert [p.name for p in compiled.generated_files if p.suffix == ".py"] == ["twice_0.py"]
    from tests.helpers import assert_matches_golden

    assert_matches_golden(compiled.run(x), model(x))


def test_manifest_checksums_are_those_of_the_files_written(tmp_path):
    # the weights are hashed once, from memory, before writing: the digest must be the file's own
    from dataclasses import replace

    import numpy as np

    import codegen

    torch.manual_seed(0)
    compiled = tvm_buda.compile_model(MLP().eval(), (torch.randn(4, 64),), name="mlp")
    (files, graph), = [(sub.files, graph) for sub, graph in compiled.subgraphs]
    assert codegen.verify(files) == []
    assert json.loads(files.manifest.read_text())["checksums"][files.params.name] == codegen.sha256(files.params)
    # a dtype our writer leaves to the safetensors library: the same rule holds
    odd = replace(graph, module_name="odd", constants={"c": np.arange(5, dtype=np.uint32)})
    written = codegen.write_module(odd, tmp_path, "header")
    assert codegen.params_sha256(odd) == codegen.sha256(written.params) and codegen.verify(written) == []
