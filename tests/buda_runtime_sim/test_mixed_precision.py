"""Per-op formats: defaults, set_configuration_options, AMP presets and configure_mixed_precision."""

import numpy as np
import pytest
import torch

import pybuda
from pybuda import DataFormat, MathFidelity


def _numerics():
    return pybuda.config._get_global_compiler_config().numerics()


def test_defaults_from_the_seed_documents():
    n = _numerics().resolve("Matmul", "mm")
    assert (n.output_df, n.accumulate_df, n.math_fidelity) == (DataFormat.Float16_b, DataFormat.Float16_b,
                                                               MathFidelity.HiFi3)


def test_configure_mixed_precision_by_type_and_by_name():
    pybuda.configure_mixed_precision(op_type="Matmul", output_df=DataFormat.Bfp8_b, math_fidelity=MathFidelity.LoFi)
    pybuda.configure_mixed_precision(name_regex="attn_.*", output_df=DataFormat.Float32)
    n = _numerics()
    assert n.resolve("Matmul", "ffn").output_df == DataFormat.Bfp8_b
    assert n.resolve("Matmul", "ffn").math_fidelity == MathFidelity.LoFi
    assert n.resolve("Matmul", "attn_qk").output_df == DataFormat.Float32  # later rules win
    assert n.resolve("Add", "ffn_add").output_df == DataFormat.Float16_b
    with pytest.raises(ValueError, match="op_type and/or name_regex"):
        pybuda.configure_mixed_precision(output_df=DataFormat.Bfp8_b)


def test_amp_level_1():
    pybuda.set_configuration_options(amp_level=1)
    n = _numerics()
    assert n.resolve("Layernorm", "ln").output_df == DataFormat.Float16_b
    assert n.resolve("Softmax", "sm").output_df == DataFormat.Float16_b
    assert n.resolve("Add", "add").output_df == DataFormat.Bfp8_b
    assert n.resolve("Matmul", "mm").math_fidelity == MathFidelity.HiFi2


@pytest.mark.parametrize("level, weight_df, fidelity", [("1", DataFormat.Bfp8, MathFidelity.HiFi2),
                                                        ("2", DataFormat.Bfp4, MathFidelity.LoFi)])
def test_pybuda_amp_light(monkeypatch, level, weight_df, fidelity):
    monkeypatch.setenv("PYBUDA_AMP_LIGHT", level)
    n = _numerics().resolve("Matmul", "mm")
    assert (n.weight_df, n.math_fidelity) == (weight_df, fidelity)


class TwoMatmuls(pybuda.PyBudaModule):
    def __init__(self, name):
        super().__init__(name)
        rng = np.random.default_rng(0)
        self.w1 = pybuda.Parameter(rng.standard_normal((64, 64)).astype(np.float32), requires_grad=False)
        self.w2 = pybuda.Parameter(rng.standard_normal((64, 64)).astype(np.float32), requires_grad=False)

    def forward(self, x):
        return pybuda.op.Matmul("second", pybuda.op.Matmul("first", x, self.w1), self.w2)


def test_per_op_formats_reach_the_simulated_tensors():
    pybuda.configure_mixed_precision(name_regex="first", output_df=DataFormat.Bfp8_b)
    pybuda.set_configuration_options(op_intermediates_to_save=["first", "second"])
    module = TwoMatmuls("m")
    pybuda.run_inference(module, inputs=[(torch.randn(1, 64, 64),)]).get()
    first, second = pybuda.get_intermediates_queue().get()
    assert first.data_format == DataFormat.Bfp8_b and second.data_format == DataFormat.Float16_b
    from buda_runtime_sim.formats import quantize

    values = first.to_framework("numpy")
    assert np.array_equal(quantize(values, DataFormat.Bfp8_b), values)  # really stored as Bfp8_b


def test_resolve_follows_a_configuration_changed_in_place():
    """resolve keeps what it resolved, keyed by the whole configuration: fields assigned and rules
    appended after a first resolve take effect on the next one."""
    from buda_runtime_sim.numerics_config import MixedPrecisionRule, NumericsConfig

    n = NumericsConfig()
    assert n.resolve("Matmul", "mm").math_fidelity == MathFidelity.HiFi3
    n.math_fidelity = MathFidelity.LoFi
    assert n.resolve("Matmul", "mm").math_fidelity == MathFidelity.LoFi
    n.default_df_override = DataFormat.Float32
    assert n.resolve("Matmul", "mm").output_df == DataFormat.Float32
    n.rules.append(MixedPrecisionRule(op_type="Matmul", output_df=DataFormat.Bfp8_b))
    assert n.resolve("Matmul", "mm").output_df == DataFormat.Bfp8_b
    assert n.resolve("Add", "add").output_df == DataFormat.Float32
    n.rules.clear()
    assert n.resolve("Matmul", "mm") == NumericsConfig(default_df_override=DataFormat.Float32,
                                                       math_fidelity=MathFidelity.LoFi).resolve("Matmul", "mm")
