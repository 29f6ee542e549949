"""Any exception in compile, run_inference, run_forward or a push leaves the process usable: no
half-registered device or module, nothing stale queued, the next call with a new module works,
shutdown is idempotent."""

import pytest
import torch
import tvm_ffi

import pybuda
import tvm_buda
from buda_runtime_sim.runtime import devices
from tests.helpers import assert_matches_golden


class TwoInputs(torch.nn.Module):
    def forward(self, x, y):
        return x * y + x


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU()).eval()


def _assert_mlp_runs_on_a_new_device():
    model, x = _mlp(), torch.randn(4, 32)
    out = pybuda.run_inference(module=pybuda.PyTorchModule("mlp", model), inputs=[(x,)]).get()[0]
    with torch.no_grad():
        assert_matches_golden(out.to_framework("pytorch"), model(x))


def test_refused_configuration_then_another_module():
    """The issue's repro: a refused option inside run_inference, then run_inference(OtherModule(...))."""
    x = torch.randn(4, 32)
    pybuda.set_configuration_options(accumulate_df=pybuda.DataFormat.Float32,   # Grayskull: no fp32 dest
                                     device_config="gs_e150")
    with pytest.raises(ValueError, match="accumulate_df=Float32"):
        pybuda.run_inference(module=pybuda.PyTorchModule("two", TwoInputs()), inputs=[(x, x)])
    assert devices.registered_devices() == [], "the failed call's device stayed registered"
    pybuda.set_configuration_options(accumulate_df=pybuda.DataFormat.Float16_b)
    _assert_mlp_runs_on_a_new_device()


def test_failing_forward_then_another_module():
    class Broken(pybuda.PyBudaModule):
        def forward(self, act):
            raise RuntimeError("kernel exploded")

    with pytest.raises(RuntimeError, match="kernel exploded"):
        pybuda.run_inference(module=Broken("broken"), inputs=[(torch.randn(4, 32),)])
    _assert_mlp_runs_on_a_new_device()


def test_bad_second_input_queues_nothing():
    model, x = _mlp(), torch.randn(4, 32)
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", model))
    with pytest.raises(TypeError, match="not a tensor"):
        pybuda.run_inference(inputs=[(x,), ("not a tensor",)])
    assert len(tt0.input_queue) == 0, "the first input of the failed call is still queued"
    out = pybuda.run_inference(inputs=[(x,)]).get()[0]
    with torch.no_grad():
        assert_matches_golden(out.to_framework("pytorch"), model(x))


def test_device_with_a_bad_module_is_not_registered():
    with pytest.raises(TypeError, match="expects PyBuda modules"):
        pybuda.TTDevice("tt0", module=[pybuda.PyTorchModule("mlp", _mlp()), "not a module"])
    assert devices.registered_devices() == []
    _assert_mlp_runs_on_a_new_device()


def test_failed_run_forward_keeps_the_pipeline():
    model, x = _mlp(), torch.randn(4, 32)
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", model))
    output_q = pybuda.initialize_pipeline(training=False, sample_inputs=(x,))
    with pytest.raises(RuntimeError, match="1 input"):
        pybuda.run_forward(input_count=1)  # nothing pushed
    tt0.push_to_inputs((x,))
    with pytest.raises(ValueError, match="shape"):
        tt0.push_to_inputs((torch.randn(5, 32),))
    pybuda.run_forward(input_count=1)
    with torch.no_grad():
        assert_matches_golden(output_q.get()[0].to_framework("pytorch"), model(x))


def test_failed_compile_leaves_nothing_registered():
    before = set(tvm_ffi.registry.list_global_func_names())

    class Cumsum(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, dim=1)

    config = pybuda.config._get_global_compiler_config()  # strict: an unsupported op is an error
    config.enable_tvm_cpu_fallback = False
    config.cpu_fallback_ops = set()
    with pytest.raises(Exception, match="cumsum"):
        tvm_buda.compile_model(Cumsum(), (torch.randn(4, 32),), config=config)
    assert set(tvm_ffi.registry.list_global_func_names()) - before == set()
    with pytest.raises(Exception, match="cumsum"):
        pybuda.run_inference(module=pybuda.PyTorchModule("cumsum", Cumsum()), inputs=[(torch.randn(4, 32),)])
    assert devices.registered_devices() == []
    config.enable_tvm_cpu_fallback = True
    _assert_mlp_runs_on_a_new_device()


def test_shutdown_is_idempotent():
    pybuda.shutdown()
    pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", _mlp())).push_to_inputs((torch.randn(4, 32),))
    with pytest.warns(RuntimeWarning, match="never run"):
        pybuda.shutdown()
    pybuda.shutdown()
    assert devices.registered_devices() == []
    _assert_mlp_runs_on_a_new_device()
