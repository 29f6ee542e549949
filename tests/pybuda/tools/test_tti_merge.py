"""pybuda.tools.tti_merge: three images merged into one; each model runs from it with its own
outputs; the memory footprint per DRAM and host channel is printed."""

import pytest
import torch

import pybuda
from buda_runtime_sim.perf import memory
from buda_runtime_sim.runtime.images import ImageError
from pybuda.tools.tti_merge import main, merge_models
from tvm_buda.demo_models import embedding_cumsum, mlp


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """a.tti, b.tti, c.tti (two MLPs and an embedding model with host parts) and their outputs."""
    folder = tmp_path_factory.mktemp("device_images")
    torch.manual_seed(0)
    cases = {"a": (mlp(), torch.randn(8, 64)), "b": (mlp(32, 48, 16), torch.randn(4, 32)),
             "c": (embedding_cumsum(), torch.randint(0, 100, (2, 7)))}
    expected = {}
    for name, (model, x) in cases.items():
        pybuda.shutdown()
        module = pybuda.PyTorchModule(f"model_{name}", model)
        tt0 = pybuda.TTDevice("tt0", arch=pybuda.BackendDevice.Wormhole_B0, module=module)
        tt0.compile_to_image(img_path=str(folder / f"{name}.tti"), sample_inputs=(x,))
        expected[name] = (x, tt0.compiled[id(module)].run(x))
    pybuda.shutdown()
    return folder, expected


def test_three_models_run_from_one_merged_image(images, tmp_path, capsys):
    folder, expected = images
    path = merge_models(folder, ["a", "b", "c"], "wormhole_b0", str(tmp_path / "merged.tti"))
    printed = capsys.readouterr().out
    assert "Displaying memory footprint per DRAM channel (MB):" in printed
    assert "Displaying memory footprint per Host channel (MB):" in printed
    assert "5 : " in printed and "6 : " not in printed      # Wormhole: 6 DRAM channels, 4 host channels
    img = pybuda.TTDeviceImage.load_from_disk(path)
    assert img.model_names == ["a", "b", "c"]
    models = {name: img.load_model(name) for name in img.model_names}   # side by side in one process
    for name, (x, out) in expected.items():
        assert torch.equal(models[name].run(x), out), name
    device = pybuda.TTDevice.load_image(img=img, model="b")
    assert torch.equal(pybuda.run_inference(inputs=[(expected["b"][0],)]).get()[0].value(), expected["b"][1])
    with pytest.raises(ValueError, match=r"holds 3 models \['a', 'b', 'c'\]; name one"):
        img.model()
    assert device.name == "tt0"
    footprint = img.device["memory"]
    assert len(footprint["dram_bytes"]) == 6 and len(footprint["host_bytes"]) == 4
    assert sum(footprint["dram_bytes"]) > 0 and footprint["host_bytes"][0] > 0


def test_dynamic_queue_overlap_and_channel_switching(images, tmp_path, monkeypatch, capsys):
    folder, _ = images
    shared = pybuda.TTDeviceImage.load_from_disk(merge_models(folder, ["a", "b"], merged_model_location=str(tmp_path / "o.tti")))
    apart = pybuda.TTDeviceImage.load_from_disk(merge_models(folder, ["a", "b"], merged_model_location=str(tmp_path / "s.tti"),
                                                             overlap_dynamic_queues=False))
    assert sum(apart.device["memory"]["host_bytes"]) > sum(shared.device["memory"]["host_bytes"])
    monkeypatch.setitem(memory.DRAM_CHANNELS, pybuda.BackendDevice.Wormhole_B0, (6, 18_000))   # a.fc1 (16 KiB) then b.fc2 land on channel 0
    with pytest.raises(MemoryError, match="DRAM channel .* is full.*enable switch_chans_if_capacity_hit"):
        merge_models(folder, ["a", "b", "c"], merged_model_location=str(tmp_path / "x.tti"),
                     switch_chans_if_capacity_hit=False)
    merge_models(folder, ["a", "b", "c"], merged_model_location=str(tmp_path / "y.tti"))  # switching makes it fit


def test_command_line_and_errors(images, tmp_path, capsys):
    folder, _ = images
    out = tmp_path / "cli.tti"
    assert main(["-mbl", str(folder), "-mdl", "a", "c", "-a", "wormhole_b0", "-mml", str(out), "-scr", "-dqo"]) == 0
    assert "merged 2 models" in capsys.readouterr().out
    assert pybuda.TTDeviceImage.load_from_disk(out).model_names == ["a", "c"]
    assert main(["-mbl", str(folder), "-mdl", "a", "-a", "grayskull", "-mml", str(out)]) == 1
    assert "compiled for wormhole_b0, not grayskull" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="no TTI image"):
        merge_models(folder, ["a", "missing"])
    with pytest.raises(ValueError, match="named twice"):
        merge_models(folder, ["a", "a"])
    assert issubclass(ImageError, ValueError)
