"""The TT-Dispatch guide's three examples (data/tt_dispatch_guide.rst), extracted and run verbatim."""

import re
from pathlib import Path

import pytest
import torch

import tt_lib

GUIDE = Path(__file__).resolve().parent / "data" / "tt_dispatch_guide.rst"


def _examples() -> list[str]:
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", GUIDE.read_text())
    return [re.sub(r"^    ", "", b, flags=re.M) for b in blocks]


def test_the_guide_has_three_examples():
    assert len(_examples()) == 3


@pytest.mark.parametrize("index", range(3))
def test_seed_example_runs_verbatim(index, monkeypatch):
    # The third example's `tt_lib.tensor.op(args)` stands for any op on device tensors, and it
    # uses `host` without defining it: we supply those three names and nothing else.
    device_holder = {}
    original_create = tt_lib.device.CreateDevice

    def create(*a, **k):
        device_holder["device"] = original_create(*a, **k)
        return device_holder["device"]

    monkeypatch.setattr(tt_lib.device, "CreateDevice", create)
    monkeypatch.setattr(tt_lib.tensor, "op", tt_lib.tensor.relu, raising=False)

    namespace = {"host": tt_lib.device.GetHost()}
    source = _examples()[index]
    if "tt_lib.tensor.op(args)" in source:
        source = source.replace("out = tt_lib.tensor.op(args)",
                                "args = __make_args(device)\nout = tt_lib.tensor.op(args)")
        namespace["__make_args"] = lambda device: tt_lib.tensor.Tensor(
            torch.randn(1, 1, 32, 32), layout=tt_lib.tensor.Layout.TILE).to(device)
    exec(compile(source, f"seed-003-example-{index}", "exec"), namespace)
    device = device_holder["device"]
    assert device.closed  # every example closes its device
    if index == 2:
        out_host = namespace["out"]  # option 2 rebinds `out` to a host tensor
        assert not out_host.on_device()
        assert (out_host.to_torch() >= 0).all()  # it ran relu
