"""Images target a board: harvesting, device config and descriptor are recorded, shown by info()
and checked on load; parameters can be stored as device tiles that decode to the device's values."""

import numpy as np
import pytest
import torch

import pybuda
from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.formats import quantize, tile_bytes
from buda_runtime_sim.perf.ops import tensor_tiles
from buda_runtime_sim.runtime import image_tensors
from buda_runtime_sim.runtime.images import ImageError
from codegen.artifacts import read_safetensors
from tvm_buda.demo_models import mlp

pytestmark = pytest.mark.filterwarnings("ignore:BackendType.Silicon requested")


def _mlp_image(path="device_images/tt0.tti", arch=pybuda.BackendDevice.Grayskull, **options):
    pybuda.set_configuration_options(**options)
    torch.manual_seed(0)
    module, x = pybuda.PyTorchModule("mlp", mlp()), torch.randn(8, 64)
    tt0 = pybuda.TTDevice("tt0", arch=arch, devtype=pybuda.BackendType.Silicon, module=module)
    img = tt0.compile_to_image(img_path=path, training=False, sample_inputs=(x,))
    compiled = tt0.compiled[id(module)]
    expected = compiled.run(x)
    pybuda.shutdown()
    _mlp_image.compiled = compiled
    return img, x, expected


def test_info_and_loading_checks_of_a_harvested_grayskull_image(capsys):
    img, x, expected = _mlp_image(device_config="gs_e150", harvested_rows=[1, 11])
    text = img.info()
    assert capsys.readouterr().out.strip() == text.strip()
    for line in ("- Device Name: tt0", "- arch: BackendDevice.Grayskull", "- chip_ids: [0]",
                 "- backend device type: BackendType.Silicon", "- grid size: [8, 12]", "- harvested rows: 2050",
                 "- training: False", "- ordered input shapes: [[8, 64]]", "- ordered targets shapes: []"):
        assert line in text
    assert "tvm_buda_version" in text and "apache_tvm_version" in text
    assert img.get_input_shapes() == [[8, 64]]
    # loading checks the device this process targets
    pybuda.set_configuration_options(harvested_rows=[2])
    with pytest.raises(ImageError, match=r"harvested rows \[1, 11\] \(mask 2050\).*rows \[2\]"):
        pybuda.TTDevice.load_image(img=img)
    pybuda.set_configuration_options(harvested_rows=[1, 11], device_config="wh_n150")
    with pytest.raises(ImageError, match="compiled for gs_e150, but this device is wh_n150"):
        pybuda.TTDevice.load_image(img=img)
    pybuda.set_configuration_options(device_config="gs_e150")
    device = pybuda.TTDevice.load_image(img=img)
    assert device.arch == pybuda.BackendDevice.Grayskull and device.devtype == pybuda.BackendType.Silicon
    output = pybuda.run_inference(inputs=[(x,)]).get()[0]
    assert torch.equal(output.value(), expected)


def test_device_config_must_match_the_arch():
    with pytest.raises(ValueError, match="arch=Grayskull conflicts with device_config .wh_n150."):  # at TTDevice creation
        _mlp_image(device_config="wh_n150")


def test_a_custom_device_descriptor_is_embedded(tmp_path):
    desc = tmp_path / "wormhole_b0_4x6.yaml"
    desc.write_text("grid:\n  x_size: 6\n  y_size: 4\n")
    img, _, _ = _mlp_image(arch=pybuda.BackendDevice.Wormhole_B0, backend_device_descriptor_path=str(desc))
    assert img.member("backend_build_binaries/wormhole_b0_4x6.yaml").read_text() == desc.read_text()
    assert img.device["device"]["device_config"] == "wh_n150"
    other = tmp_path / "wormhole_b0_8x8.yaml"
    other.write_text("grid:\n  x_size: 8\n  y_size: 8\n")
    pybuda.set_configuration_options(backend_device_descriptor_path=str(other))
    with pytest.raises(ImageError, match="described by .*8x8.yaml, but image .* another descriptor"):
        pybuda.TTDevice.load_image(img=img)
    pybuda.set_configuration_options(backend_device_descriptor_path=str(desc))
    assert pybuda.TTDevice.load_image(img=img).arch == pybuda.BackendDevice.Wormhole_B0


@pytest.mark.parametrize("variable", ["PYBUDA_TTI_BACKEND_TILIZED_FORMAT", "PYBUDA_TTI_BACKEND_FORMAT"])
def test_either_variable_selects_the_device_layout(monkeypatch, variable):
    assert image_tensors.requested_layout() == image_tensors.PLAIN
    monkeypatch.setenv(variable, "1")
    assert image_tensors.requested_layout() == image_tensors.TILIZED


def test_tilized_parameters_decode_to_the_device_values(monkeypatch):
    monkeypatch.setenv("PYBUDA_TTI_BACKEND_TILIZED_FORMAT", "1")
    monkeypatch.setenv("PYBUDA_AMP_LIGHT", "1")    # matmul weights in Bfp8: block-float tiles
    img, x, expected = _mlp_image(arch=pybuda.BackendDevice.Wormhole_B0)
    monkeypatch.delenv("PYBUDA_AMP_LIGHT")          # the image keeps its own numerics
    (sub,) = img.model()["subgraphs"]
    stored = img.tensors(sub["params"])
    originals = read_safetensors(_mlp_image.compiled.subgraphs[0][0].files.params)
    formats = {name: entry.get("data_format") for name, entry in sub["tensors"].items()}
    assert set(formats.values()) >= {"Bfp8"}, formats
    for name, entry in sub["tensors"].items():
        assert entry["layout"] == "tilized"
        fmt = DataFormat.from_json(entry["data_format"])
        assert stored[name].dtype == np.uint8 and stored[name].size == tensor_tiles(entry["shape"]) * tile_bytes(fmt)
    model = img.load_model()
    ((subgraph, _),) = model.subgraphs
    for name, value in subgraph.preloaded.items():
        np.testing.assert_array_equal(value, quantize(originals[name], DataFormat.from_json(formats[name])))
    assert torch.equal(model.run(x), expected)


def test_an_image_from_a_warm_cache_hit(monkeypatch):
    """A model loaded from the TVM cache has no Relax module and a host part that cannot be exported
    again: the image takes the output shapes from one run and copies the entry's library."""
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    _mlp_image("device_images/cold.tti")
    img, x, expected = _mlp_image("device_images/warm.tti")
    assert _mlp_image.compiled.imported.mod is None
    assert img.model()["outputs"][0]["shape"] == [8, 32]
    assert torch.equal(img.load_model().run(x), expected)


def test_an_image_is_saved_even_when_the_perf_model_fails(monkeypatch):
    from tvm_buda.compiled_model import CompiledModel

    def broken(*args, **kwargs):
        raise ZeroDivisionError("no estimate")

    monkeypatch.setattr(CompiledModel, "perf_report", broken)
    with pytest.warns(RuntimeWarning, match="perf model could not place this model .*no estimate"):
        img, x, expected = _mlp_image()
    assert img.device["models"][0]["estimated_samples_per_second"] is None
    assert torch.equal(img.load_model().run(x), expected)


def test_training_images_are_a_clear_error():
    module = pybuda.PyTorchModule("mlp", mlp())
    tt0 = pybuda.TTDevice("tt0", module=module)
    try:
        with pytest.raises(NotImplementedError, match=r"training images are not supported .*compile_to_image\(training=False\)"):
            tt0.compile_to_image(img_path="device_images/train.tti", training=True, sample_inputs=(torch.randn(8, 64),))
    finally:
        pybuda.shutdown()


def test_reloading_the_generated_modules_of_an_image_loaded_model_keeps_its_weights():
    """An image-loaded model's weights live in memory (no params file on disk): reloading its
    generated modules re-imports the code and keeps those weights instead of failing on a missing file."""
    img, x, expected = _mlp_image(device_config="gs_e150")
    pybuda.set_configuration_options(device_config="gs_e150")
    device = pybuda.TTDevice.load_image(img=img)
    (compiled,) = device.compiled.values()
    compiled.reload_generated_modules()
    output = pybuda.run_inference(inputs=[(x,)]).get()[0]
    assert torch.equal(output.value(), expected)
