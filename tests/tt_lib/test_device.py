"""tt_lib.device: lifetimes that cannot crash, and clear errors for closed or unready devices."""

import gc

import pytest
import torch

import tt_lib
from tt_lib.device import Arch
from tt_lib.tensor import Layout, Tensor


@pytest.fixture
def device():
    dev = tt_lib.device.CreateDevice(Arch.WORMHOLE_B0, 1)
    tt_lib.device.InitializeDevice(dev)
    yield dev
    tt_lib.device.CloseDevice(dev)


def test_a_device_tensor_keeps_its_device_alive():
    # The TT-Dispatch known issue: the device collected before its tensors. Here a tensor holds it.
    def make():
        dev = tt_lib.device.CreateDevice(Arch.GRAYSKULL, 2)
        tt_lib.device.InitializeDevice(dev)
        return Tensor(torch.ones(1, 1, 32, 32), layout=Layout.TILE).to(dev)

    t = make()
    gc.collect()
    out = tt_lib.tensor.relu(t).to(tt_lib.device.GetHost())
    assert out.to_torch().sum().item() == 1024
    tt_lib.device.CloseDevice(t.device())


def test_closed_device_is_a_clear_error(device):
    t = Tensor(torch.ones(1, 1, 32, 32)).to(device)
    tt_lib.device.CloseDevice(device)
    with pytest.raises(RuntimeError, match="was closed"):
        tt_lib.tensor.exp(t)
    with pytest.raises(RuntimeError, match="was closed"):
        t.to(tt_lib.device.GetHost())
    with pytest.raises(RuntimeError, match="was closed"):
        Tensor(torch.ones(2, 2)).to(device)
    tt_lib.device.CloseDevice(device)  # idempotent


def test_uninitialized_device_is_refused():
    dev = tt_lib.device.CreateDevice(Arch.GRAYSKULL, 3)
    with pytest.raises(RuntimeError, match="InitializeDevice"):
        Tensor(torch.ones(2, 2)).to(dev)
    tt_lib.device.CloseDevice(dev)


def test_slot_in_use_and_out_of_range(device):
    with pytest.raises(RuntimeError, match="already open"):
        tt_lib.device.CreateDevice(Arch.GRAYSKULL, 1)
    with pytest.raises(ValueError, match="pci_slot"):
        tt_lib.device.CreateDevice(Arch.GRAYSKULL, 99)
    with pytest.raises(TypeError, match="Arch"):
        tt_lib.device.CreateDevice("grayskull", 0)


def test_default_device(device):
    tt_lib.device.SetDefaultDevice(device)
    assert tt_lib.device.GetDefaultDevice() is device
    tt_lib.device.CloseDevice(device)
    assert tt_lib.device.GetDefaultDevice() is None


def test_device_memory_counts_padded_tiles(device):
    t = Tensor(torch.ones(1, 1, 33, 33)).to(device)  # 2x2 tiles of bfloat16 after padding
    assert device.allocated_bytes == t.storage_bytes > 4 * 32 * 32 * 2 - 1
    del t
    gc.collect()
    assert device.allocated_bytes == 0


def test_libs_spelling_is_the_same_module():
    from libs import tt_lib as seed_spelling

    assert seed_spelling is tt_lib
