"""Saving and loading the host library writes none of TVM's "Scope Saving/Loaded" debugging lines
to stderr, and passes on anything else written there meanwhile."""

import os

import torch

import pybuda
from tvm_buda import host_library


def test_other_stderr_output_is_passed_on(capfd):
    with host_library._without_scope_warnings():
        os.write(2, b"[12:00:00] /project/src/runtime/vm/executable.cc:340: Warning: Scope Loaded:\n")
        os.write(2, b"a real problem\n")
    err = capfd.readouterr().err
    assert err == "a real problem\n"


def test_an_image_saves_and_loads_quietly(tmp_path, capfd):
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16)).eval()
    x = torch.randn(4, 32)
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", model))
    try:
        expected = pybuda.run_inference(inputs=[(x,)]).get()[0].value()
        capfd.readouterr()
        img = tt0.compile_to_image(img_path=str(tmp_path / "mlp.tti"), sample_inputs=(x,))
        compiled = img.load_model()
        assert torch.equal(compiled.run(x), expected)
    finally:
        pybuda.shutdown()
    assert "Scope" not in capfd.readouterr().err
