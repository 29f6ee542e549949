"""Devices, queues, pipelines, configuration and parameters: the PyBuda runtime API and its errors."""

import numpy as np
import pytest
import torch

import pybuda
from tests.helpers import assert_matches_golden
from tests.models import MLP, golden


class Scale(pybuda.PyBudaModule):
    def __init__(self, name):
        super().__init__(name)
        self.w = pybuda.Parameter(torch.full((32, 32), 0.5), requires_grad=False)

    def forward(self, x):
        return pybuda.op.Matmul("mm", x, self.w)


def test_push_before_place_is_an_error():
    tt0 = pybuda.TTDevice("tt0")
    with pytest.raises(RuntimeError, match="place_module first"):
        tt0.push_to_inputs(torch.randn(1, 32))


def test_wrong_shape_or_dtype_at_push_after_compile():
    torch.manual_seed(0)
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", MLP()))
    pybuda.run_inference(inputs=[(torch.randn(4, 64),)]).get()  # compiles for (4, 64) float32
    with pytest.raises(ValueError, match=r"shape \(4, 63\), expected \(4, 64\)"):
        tt0.push_to_inputs(torch.randn(4, 63))
    with pytest.raises(TypeError, match="dtype float64, expected float32"):
        tt0.push_to_inputs(torch.randn(4, 64, dtype=torch.float64))
    with pytest.raises(TypeError, match="2 input"):
        tt0.push_to_inputs(torch.randn(4, 64), torch.randn(4, 64))
    with pytest.raises(TypeError, match="not a tensor"):
        tt0.push_to_inputs(("hello",))


def test_inconsistent_pushes_before_compile_are_rejected():
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", MLP()))
    tt0.push_to_inputs(torch.randn(4, 64))
    with pytest.raises(ValueError, match="expected"):
        tt0.push_to_inputs(torch.randn(2, 64))
    pybuda.run_inference().get()


def test_pybuda_module_input_count_checked():
    tt0 = pybuda.TTDevice("tt0", module=Scale("s"))
    with pytest.raises(TypeError, match="takes 1 input"):
        tt0.push_to_inputs(torch.randn(1, 32), torch.randn(1, 32))


def test_unknown_option_is_an_error_naming_it():
    with pytest.raises(TypeError, match="unknown option.*enable_magic"):
        pybuda.set_configuration_options(enable_magic=True)
    pybuda.set_configuration_options(balancer_policy="Ribbon", enable_t_streaming=True)
    assert pybuda.config._get_global_compiler_config().balancer_policy == "Ribbon"
    with pytest.raises(ValueError, match="not harvestable"):
        pybuda.set_configuration_options(harvested_rows=[6])


def test_shutdown_twice_and_run_after_shutdown():
    tt0 = pybuda.TTDevice("tt0", module=Scale("s"))
    pybuda.shutdown()
    pybuda.shutdown()  # no error
    with pytest.raises(RuntimeError, match="after shutdown"):
        tt0.push_to_inputs(torch.randn(1, 32))
    with pytest.raises(RuntimeError, match="shut down"):
        pybuda.run_inference(input_count=1)


def test_unconsumed_inputs_are_drained_and_reported_at_shutdown():
    tt0 = pybuda.TTDevice("tt0", module=Scale("s"))
    for _ in range(3):
        tt0.push_to_inputs(torch.randn(1, 32))
    pybuda.run_inference(input_count=1).get()
    with pytest.warns(RuntimeWarning, match="2 input"):
        pybuda.shutdown()
    assert len(tt0.input_queue) == 0


def test_cpu_tt_cpu_pipeline():
    torch.manual_seed(0)
    pre = torch.nn.Linear(16, 64).eval()
    mid = MLP().eval()
    post = torch.nn.Softmax(dim=-1)
    pybuda.CPUDevice("cpu0", module=pybuda.PyTorchModule("pre", pre))
    pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mid", mid))
    pybuda.CPUDevice("cpu1", module=pybuda.PyTorchModule("post", post))
    x = torch.randn(4, 16)
    out = pybuda.run_inference(inputs=[(x,)]).get()[0].value()
    with torch.no_grad():
        ref = post(mid(pre(x)))
    assert_matches_golden(out, ref)


def test_several_modules_on_one_device_run_in_sequence():
    tt0 = pybuda.TTDevice("tt0")
    a, b = Scale("a"), Scale("b")
    tt0.place_module([a, b])
    x = torch.randn(1, 32, 32)
    out = pybuda.run_inference(inputs=[(x,)]).get()[0].value()
    assert_matches_golden(out, x @ torch.full((32, 32), 0.5) @ torch.full((32, 32), 0.5))


def test_initialize_pipeline_then_run_forward():
    torch.manual_seed(0)
    model = MLP().eval()
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", model))
    output_q = pybuda.initialize_pipeline(training=False, sample_inputs=(torch.randn(4, 64),))
    assert tt0.compiled, "initialize_pipeline compiles"
    xs = [torch.randn(4, 64) for _ in range(2)]
    for x in xs:
        tt0.push_to_inputs(x)
    pybuda.run_forward(input_count=2)
    for x in xs:
        assert_matches_golden(output_q.get()[0].value(), golden(model, x))


def test_run_forward_before_initialize_is_an_error():
    pybuda.TTDevice("tt0", module=Scale("s"))
    with pytest.raises(RuntimeError, match="initialize_pipeline"):
        pybuda.run_forward()


def test_parameter_checkpoint_and_update():
    module = Scale("s")
    tt0 = pybuda.TTDevice("tt0", module=module)
    checkpoint = pybuda.get_parameter_checkpoint(tt0)
    assert np.allclose(checkpoint["w"].to_framework("numpy"), 0.5)
    pybuda.update_device_parameters(tt0, [{"w": torch.full((32, 32), 2.0)}])
    x = torch.randn(1, 32, 32)
    out = pybuda.run_inference(inputs=[(x,)]).get()[0].value()
    assert_matches_golden(out, x @ torch.full((32, 32), 2.0))


def test_parameter_update_on_a_compiled_pytorch_module():
    torch.manual_seed(0)
    model = MLP().eval()
    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("mlp", model))
    x = torch.randn(4, 64)
    pybuda.run_inference(inputs=[(x,)]).get()
    (checkpoint,) = pybuda.get_parameter_checkpoint()
    assert "p_fc2_bias" in checkpoint
    pybuda.update_device_parameters(parameters=[{"p_fc2_bias": torch.full((32,), 10.0)}])
    out = pybuda.run_inference(inputs=[(x,)]).get()[0].value()
    with torch.no_grad():
        model.fc2.bias.fill_(10.0)
    assert_matches_golden(out, model(x))


def test_module_run():
    x = torch.randn(1, 32, 32)
    (out,) = Scale("s").run(x)
    assert_matches_golden(out.value(), x @ torch.full((32, 32), 0.5))


def test_configuration_changes_simulated_numerics():
    torch.manual_seed(0)
    x = torch.randn(1, 64, 64)

    class Mm(pybuda.PyBudaModule):
        def __init__(self, name):
            super().__init__(name)
            self.w = pybuda.Parameter(torch.randn(64, 64), requires_grad=False)

        def forward(self, a):
            return pybuda.op.Matmul("mm", a, self.w)

    module = Mm("mm")
    exact = x.double() @ torch.from_numpy(module.w.value()).double()

    def error(**options):
        pybuda.shutdown()
        pybuda.config._reset_global_compiler_config()
        pybuda.set_configuration_options(**options)
        pybuda.TTDevice("tt0", arch=pybuda.BackendDevice.Wormhole_B0, module=module)  # fp32 accumulation
        out = pybuda.run_inference(inputs=[(x,)]).get()[0].value().double()
        return float((out - exact).abs().max())

    fp32 = error(default_df_override=pybuda.DataFormat.Float32, accumulate_df=pybuda.DataFormat.Float32,
                 math_fidelity=pybuda.MathFidelity.HiFi4)
    bf16 = error()
    bfp8 = error(default_df_override=pybuda.DataFormat.Bfp8_b, math_fidelity=pybuda.MathFidelity.LoFi)
    assert fp32 < bf16 < bfp8


def test_float32_accumulation_on_grayskull_is_a_clear_error():
    pybuda.set_configuration_options(accumulate_df=pybuda.DataFormat.Float32)
    pybuda.TTDevice("gs0", arch=pybuda.BackendDevice.Grayskull, module=Scale("s"))
    with pytest.raises(ValueError, match="not available on Grayskull"):
        pybuda.run_inference(inputs=[(torch.randn(1, 32, 32),)])
