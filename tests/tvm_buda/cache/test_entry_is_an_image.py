"""A cache entry is a TT device image: the image reader loads it, it carries the first run's
device state, and it holds the same bytes as `tvm-buda image save` of the same model."""

import json
import os
import subprocess
import sys

import torch

import tvm_buda
from buda_runtime_sim.runtime.images import TTDeviceImage
from tests.helpers import assert_matches_golden
from tests.models import golden
from tvm_buda.demo_models import mlp

from .entry_files import entries, members


def test_an_entry_loads_as_an_image_and_a_hit_starts_warm(monkeypatch):
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    torch.manual_seed(0)
    model, x = mlp(), torch.randn(8, 64)
    cold = tvm_buda.compile_model(model, (x,), name="mlp")
    (entry,) = entries()
    image = TTDeviceImage.load_from_disk(entry)
    assert image.device["cache"]["key"] == cold.cache_key
    assert torch.equal(torch.as_tensor(image.load_model().run(x.numpy())), cold.run(x))
    warm = tvm_buda.compile_model(model, (x,), name="mlp")
    (sub, _), = warm.subgraphs
    params = sub.module.get_parameters()
    assert any(p.consteval or p._device_copies for p in params), "a hit carries the first run's device state"
    assert torch.equal(warm.run(x), cold.run(x))
    assert_matches_golden(warm.run(x), golden(model, x))


def test_an_entry_holds_the_bytes_of_image_save(tmp_path, monkeypatch):
    torch.manual_seed(0)
    model, x = mlp(), torch.randn(8, 64)
    pt2 = tmp_path / "mlp.pt2"
    torch.export.save(torch.export.export(model.eval(), (x,)), str(pt2))
    env = {**os.environ, "PYBUDA_ENABLE_TVM_CACHE": "0"}
    saved = subprocess.run([sys.executable, "-m", "tvm_buda.cli", "image", "save", str(pt2), "--device-config",
                            "wh_n150", "-o", "saved.tti", "--quiet"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
    assert saved.returncode == 0, saved.stderr[-3000:]
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    tvm_buda.compile_model(str(pt2))   # the default board, wh_n150
    (entry,) = entries()
    cached, image = members(entry), members(tmp_path / "saved.tti")
    assert sorted(cached) == sorted(image)
    for name in cached:
        if name != "device.json":
            assert cached[name] == image[name], f"{name} differs"
    cached_device, image_device = json.loads(cached["device.json"]), json.loads(image["device.json"])
    assert set(cached_device) - set(image_device) == {"cache"}
    for device in (cached_device, image_device):
        del device["created"]
        device.pop("cache", None)
    assert cached_device == image_device   # every member's size and checksum included
