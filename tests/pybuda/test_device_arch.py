"""A TTDevice's arch follows device_config (gs_* Grayskull, wh_* Wormhole_B0); a conflicting explicit
pair is a clear error; with neither, the installed board's (PYBUDA_DEVICE_CONFIG, a Wormhole n150 by
default), as detect_available_devices() says."""

import pytest

import pybuda
from pybuda import BackendDevice


class Scale(pybuda.PyBudaModule):
    def forward(self, act):
        return pybuda.op.Multiply("mul", act, act)


@pytest.mark.parametrize("board, arch", [("gs_e150", BackendDevice.Grayskull), ("gs_e75", BackendDevice.Grayskull),
                                         ("wh_n150", BackendDevice.Wormhole_B0), ("wh_n300", BackendDevice.Wormhole_B0)])
def test_arch_follows_device_config(board, arch):
    pybuda.set_configuration_options(device_config=board)
    tt0 = pybuda.TTDevice("tt0", module=Scale("s"))
    assert tt0.arch is arch and tt0.board_name == board


def test_wormhole_config_allows_fp32_accumulation():
    """The issue's repro: device_config="wh_n150" and accumulate_df=Float32 on a TTDevice made without arch."""
    pybuda.set_configuration_options(device_config="wh_n150", accumulate_df=pybuda.DataFormat.Float32)
    pybuda.TTDevice("tt0", module=Scale("s"))
    out = pybuda.run_inference(inputs=[(pybuda.Tensor.create_from_torch(__import__("torch").ones(1, 32, 32)),)])
    assert float(out.get()[0].value().sum()) == 32 * 32


def test_conflicting_arch_and_device_config_is_an_error():
    pybuda.set_configuration_options(device_config="wh_n150")
    with pytest.raises(ValueError, match="arch=Grayskull conflicts with device_config 'wh_n150'"):
        pybuda.TTDevice("tt0", arch=BackendDevice.Grayskull, module=Scale("s"))
    from buda_runtime_sim.runtime import devices

    assert devices.registered_devices() == []
    assert pybuda.TTDevice("tt1", arch=BackendDevice.Wormhole_B0).arch is BackendDevice.Wormhole_B0


def test_default_agrees_with_detect_available_devices(monkeypatch):
    monkeypatch.delenv("PYBUDA_DEVICE_CONFIG", raising=False)
    tt0 = pybuda.TTDevice("tt0")
    assert tt0.arch is pybuda.detect_available_devices()[0] is BackendDevice.Wormhole_B0   # a current card
    assert tt0.board_name == "wh_n150" and pybuda.detect_available_devices() == [BackendDevice.Wormhole_B0]
    assert pybuda.TTDevice("gs", arch=BackendDevice.Grayskull).board_name == "gs_e150"
    assert pybuda.TTDevice("wh", arch=BackendDevice.Wormhole_B0).board_name == "wh_n150"


@pytest.mark.parametrize("board, chips", [("gs_e150", [BackendDevice.Grayskull]),
                                          ("wh_n300", [BackendDevice.Wormhole_B0] * 2)])
def test_installed_board_is_a_setting(monkeypatch, board, chips):
    """PyBuda's Wormhole demos check detect_available_devices(); a Grayskull script sets the variable."""
    monkeypatch.setenv("PYBUDA_DEVICE_CONFIG", board)
    assert pybuda.detect_available_devices() == chips
    tt0 = pybuda.TTDevice("tt0", module=Scale("s"))
    assert tt0.arch is chips[0] and tt0.board_name == board
    from buda_runtime_sim.runtime.images import target_of

    assert target_of(tt0)["device_config"] == board          # an image compiled on it targets that board too
    pybuda.set_configuration_options(device_config="wh_n150")      # the config setting wins
    assert pybuda.detect_available_devices() == [BackendDevice.Wormhole_B0]


def test_unknown_installed_board_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PYBUDA_DEVICE_CONFIG", "wh_n999")
    with pytest.raises(ValueError, match="PYBUDA_DEVICE_CONFIG='wh_n999' is not a board"):
        pybuda.detect_available_devices()
