"""A TTDevice over several chips: placement split, bit-identical outputs, data parallel, bad input."""

import pytest
import torch

import pybuda
from buda_runtime_sim.runtime import chips


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 32)).eval()


def _run(model, x, **device):
    tt = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", model), **device)
    outputs = [o.value() for o in pybuda.run_inference(inputs=[(x,)]).get()]
    return tt, outputs


def test_two_chips_give_bit_identical_outputs_and_report_the_crossing():
    model, x = _mlp(), torch.randn(8, 64)
    pybuda.set_configuration_options(device_config="wh_n300")
    one_dev, [one] = _run(model, x)
    assert one_dev.chip_ids == [0] and one_dev.perf_report().board.chips == 1
    pybuda.shutdown()
    pybuda.set_chip_break("v_2_matmul")        # the second Linear starts on chip 1
    tt, [two] = _run(model, x, num_chips=2)
    assert tt.chip_ids == [0, 1] and tt.num_chips == 2
    assert torch.equal(one, two)
    ran = chips.last_run(tt).ops_by_chip()
    assert "v_0_matmul" in ran[0] and {"v_2_matmul", "v_4_matmul"} <= set(ran[1])
    report = tt.perf_report()
    assert report.op("v_0_matmul").chip == 0 and report.op("v_2_matmul").chip == 1
    assert {(c.epoch, c.chip) for c in report.chip_epochs} == {(0, 0), (0, 1)}
    [eth] = report.ethernet
    assert (eth.producer, eth.consumer) == ("v_0_matmul", "v_2_matmul")   # the ReLU is fused into its matmul
    # what the simulator moved between chips is what the perf model charges to Ethernet
    assert [(c.src_chip, c.dst_chip, c.bytes) for c in chips.last_run(tt).crossings] == [(0, 1, eth.bytes)]
    assert "chip 0->1" in report.summary()


def test_data_parallel_returns_one_output_per_chip(monkeypatch):
    model, x = _mlp(), torch.randn(16, 64)
    pybuda.set_configuration_options(device_config="wh_n300")
    _, [single] = _run(model, x)
    pybuda.shutdown()
    monkeypatch.setenv("PYBUDA_N300_DATA_PARALLEL", "1")
    output = pybuda.run_inference(pybuda.PyTorchModule("mlp", model), inputs=[(x,)]).get()
    assert len(output) == 2 and output[0].shape == (8, 32)
    # as Tenstorrent's demos combine them
    assert torch.equal(torch.cat((output[0].to_pytorch(), output[1].to_pytorch()), dim=0), single)
    from buda_runtime_sim.runtime.devices import registered_devices

    [tt] = registered_devices()
    assert tt.chip_ids == [0, 1] and set(chips.last_run(tt).ops_by_chip()) == {0, 1}
    report = tt.perf_report(microbatch=4096)
    assert report.chips == 2 and 1.0 < report.speedup <= 2.0
    pybuda.shutdown()
    with pytest.raises(ValueError, match=r"input 0 has shape \(3, 64\); use a batch divisible by 2"):
        pybuda.run_inference(pybuda.PyTorchModule("mlp", model), inputs=[(torch.randn(3, 64),)])


def test_chip_selection_errors_name_the_board_and_the_fix():
    pybuda.set_configuration_options(device_config="wh_n300")
    with pytest.raises(ValueError, match=r"chip_ids=\[0, 2\] must be distinct chips of wh_n300"):
        pybuda.TTDevice("tt0", chip_ids=[0, 2])
    with pytest.raises(ValueError, match="3 chips requested but wh_n300 has 2"):
        pybuda.TTDevice("tt0", num_chips=3)
    with pytest.raises(ValueError, match="must be integers"):
        pybuda.TTDevice("tt0", chip_ids=[(0, 1)])
    with pytest.raises(ValueError, match="num_chips=1 contradicts chip_ids=\\[0, 1\\]"):
        pybuda.TTDevice("tt0", num_chips=1, chip_ids=[0, 1])
    assert pybuda.TTDevice("all", num_chips=0).chip_ids == [0, 1]
    assert pybuda.TTDevice("second", chip_ids=[1]).chip_ids == [1]
    pybuda.set_configuration_options(device_config="gs_e150")
    with pytest.raises(ValueError, match="2 chips requested but gs_e150 has 1"):
        pybuda.TTDevice("gs", num_chips=2)


def test_a_chip_break_naming_no_op_fails_the_run():
    pybuda.set_configuration_options(device_config="wh_n300")
    pybuda.set_chip_break("no_such_op")
    pybuda.TTDevice("tt0", num_chips=2, module=pybuda.PyTorchModule("mlp", _mlp()))
    with pytest.raises(ValueError, match=r"set_chip_break names no op of model .*\['no_such_op'\]"):
        pybuda.run_inference(inputs=[(torch.randn(8, 64),)])


def test_data_parallel_on_a_one_chip_board_says_which_board_is_needed(monkeypatch):
    monkeypatch.setenv("PYBUDA_N300_DATA_PARALLEL", "1")
    pybuda.set_configuration_options(device_config="wh_n150")
    pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", _mlp()))
    with pytest.raises(RuntimeError, match="needs a device with two chips, this one has 1 on wh_n150; set "
                                           "device_config='wh_n300'"):
        pybuda.run_inference(inputs=[(torch.randn(8, 64),)])
