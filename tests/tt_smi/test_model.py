"""The telemetry model: idle and busy figures, the thermal lag, and what running devices publish."""

import json

import pybuda
from buda_runtime_sim.runtime.telemetry import read_states, reset_states
from tt_smi.model import AMBIENT_C, IDLE_AICLK_MHZ, TDP_TEMP_C, TDP_W, chip_tdp, read_chips


def _state(board="wh_n300", chips=(0, 1), history=()):
    return {"pid": 1, "name": "tt0", "board": board, "arch": "wormhole_b0", "chip_ids": list(chips),
            "history": [list(h) for h in history]}


def test_idle_board_reads_idle_figures():
    chips = read_chips([], now=1000.0, default_board="gs_e150")
    assert [c.chip for c in chips] == [0]
    idle = chips[0]
    assert idle.busy_pct == 0 and idle.aiclk_mhz == IDLE_AICLK_MHZ
    assert idle.power_w == 0.2 * TDP_W["gs_e150"]
    assert AMBIENT_C < idle.asic_temp_c < TDP_TEMP_C


def test_busy_chip_runs_at_board_clock_and_tdp_and_heats_up_with_lag():
    busy = _state(chips=(1,), history=[(999.0, 1.0)])           # busy for the whole last second
    now = read_chips([busy], now=1000.0)
    assert [c.busy_pct for c in now] == [0.0, 100.0]             # chip 0 idle, chip 1 busy
    assert now[1].aiclk_mhz == 1000.0 and now[1].power_w == chip_tdp("wh_n300") == TDP_W["wh_n300"] / 2
    # one second of load moves the temperature only a little (time constant 20 s) ...
    assert now[1].asic_temp_c - now[0].asic_temp_c < 5
    long_run = _state(chips=(1,), history=[(900.0, 100.0)])      # ... a hundred seconds nearly settles it
    settled = read_chips([long_run], now=1000.0)[1]
    assert TDP_TEMP_C - 1 < settled.asic_temp_c <= TDP_TEMP_C


def test_running_device_publishes_its_state_and_removes_it_at_shutdown(_state_dir):
    class Double(pybuda.PyBudaModule):
        def forward(self, x):
            return pybuda.op.Add("add", x, x)

    pybuda.set_configuration_options(device_config="wh_n300")
    tt0 = pybuda.TTDevice("tt0", module=Double("double"), arch=pybuda.BackendDevice.Wormhole_B0)
    pybuda.run_inference(inputs=[(__import__("torch").ones(1, 32, 32),)]).get()
    tt0._telemetry.write(force=True)
    states = read_states()
    assert len(states) == 1 and states[0]["board"] == "wh_n300" and states[0]["runs"] == 1
    assert states[0]["history"][0][1] > 0
    assert reset_states() == 1 and read_states()[0]["history"] == []
    pybuda.shutdown()
    assert read_states() == []


def test_dead_processes_are_ignored(_state_dir):
    _state_dir.mkdir(parents=True)
    (_state_dir / "dead.json").write_text(json.dumps({**_state(), "pid": 2 ** 22 + 12345}))
    (_state_dir / "torn.json").write_text("{not json")
    assert read_states() == []


def test_estimates_are_paid_for_only_while_tt_smi_watches(_state_dir):
    from buda_runtime_sim.runtime import telemetry

    class Report:
        seconds = 0.004

    class Compiled:
        calls = 0

        def perf_report(self, board):
            Compiled.calls += 1
            return Report()

    module, compiled = object(), Compiled()
    device = type("Device", (), {"modules": [module], "compiled": {id(module): compiled}, "board_name": "wh_n150"})()
    assert telemetry.busy_seconds(device, 0.5) == 0.5 and Compiled.calls == 0   # nobody watching: no estimate
    with telemetry.watching():
        assert telemetry.watched()
        assert telemetry.busy_seconds(device, 0.5) == 0.004
        assert telemetry.busy_seconds(device, 0.5) == 0.004 and Compiled.calls == 1   # once per model
    assert not telemetry.watched()
    (_state_dir / "watching-999999999").touch()                                     # a reader that died
    assert not telemetry.watched()
