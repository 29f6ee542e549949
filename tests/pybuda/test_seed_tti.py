"""The user guide's TTI example ("TensTorrent Device Image (TTI): Saving/Loading"), as written there."""

import pytest
import torch

import pybuda
from pybuda import BackendDevice, BackendType, TTDevice, TTDeviceImage
from tests.helpers import assert_matches_golden
from tests.models import golden
from tvm_buda.demo_models import mlp

pytestmark = pytest.mark.filterwarnings("ignore:BackendType.Silicon requested")


def test_guide_save_then_load_and_run():
    torch.manual_seed(0)
    model, training = mlp(), False
    tt0 = pybuda.TTDevice(
      name="tt0",
      arch=BackendDevice.Wormhole_B0,
      devtype=BackendType.Silicon
    )
    tt0.place_module(pybuda.PyTorchModule("mlp", model))
    device_img: TTDeviceImage = tt0.compile_to_image(
        img_path="device_images/tt0.tti",
        training=training,
        sample_inputs=(torch.rand(8, 64),),
    )
    assert isinstance(device_img, TTDeviceImage)
    with pytest.raises(RuntimeError, match="a device named tt0 is already in the pipeline.*pybuda.shutdown"):
        TTDevice.load_image(img=device_img)
    pybuda.shutdown()   # as if loading in another process

    img = TTDeviceImage.load_from_disk(img_path="device_images/tt0.tti")
    device = TTDevice.load_image(img=img)

    inputs = [torch.rand(shape) for shape in img.get_input_shapes()] # create tensors using shape info from img
    device.push_to_inputs(inputs) # push newly created input activation tensors to device
    output_q = pybuda.run_inference()
    assert_matches_golden(output_q.get()[0].to_framework("pytorch"), golden(model, *inputs), "mlp from its image")
