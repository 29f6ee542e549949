"""CompilerConfig: every PyBuda field declared, typos rejected, overrides recorded, AMP levels 0-3."""

import warnings

import pytest

import pybuda
from buda_runtime_sim.config import _KNOWN, NO_EFFECT, CompilerConfig
from pybuda import DataFormat, MathFidelity

# Fields real PyBuda scripts set (counts from the public model demos, issue 19).
SET_BY_REAL_CODE = ["balancer_policy", "enable_auto_fusing", "default_dram_parameters", "enable_tvm_constant_prop",
                    "graph_solver_self_cut_type", "enable_enumerate_u_kt", "enable_auto_transposing_placement",
                    "enable_conv_prestride", "input_queues_on_host", "retain_tvm_python_files", "compile_subgraphs",
                    "convert_framework_params_to_tvm", "enable_link_past_cache_ios", "enable_single_buffer_fallback",
                    "default_df_override", "default_accumulate_df", "amp_level", "enable_t_streaming",
                    "conv_multi_op_fracture_factor_override", "op_names_to_epoch_break", "harvesting_mask"]


def _cfg():
    return pybuda.config._get_global_compiler_config()


@pytest.mark.parametrize("name", SET_BY_REAL_CODE)
def test_fields_real_code_sets_are_declared(name):
    assert name in _KNOWN
    setattr(_cfg(), name, getattr(_cfg(), name))  # round-trips without error


def test_no_effect_fields_are_all_declared():
    assert NO_EFFECT <= _KNOWN


def test_unknown_attribute_names_the_closest_option():
    with pytest.raises(AttributeError, match="'balancer_polcy'.*did you mean 'balancer_policy'"):
        _cfg().balancer_polcy = "Ribbon"
    with pytest.raises(AttributeError, match="no option 'zzz'"):
        CompilerConfig().zzz = 1


def test_values_checked_where_pybuda_has_a_fixed_set():
    with pytest.raises(ValueError, match="did you mean 'Ribbon'"):
        _cfg().balancer_policy = "Ribon"
    with pytest.raises(ValueError, match="graph_solver_self_cut_type"):
        _cfg().graph_solver_self_cut_type = "Fast"
    with pytest.raises(ValueError, match="amp_level must be 0, 1, 2 or 3"):
        pybuda.set_configuration_options(amp_level=4)


def test_pybuda_spellings_are_aliases():
    cfg = _cfg()
    cfg.default_accumulate_df = pybuda._C.DataFormat.Float32
    assert cfg.accumulate_df is DataFormat.Float32
    cfg.place_on_new_epoch("mm1")
    pybuda.config.set_epoch_break(["mm2", "mm3"])
    assert cfg.op_names_to_epoch_break == [["mm1"], ["mm2", "mm3"]]
    cfg.harvesting_mask = (1 << 3) | (1 << 11)
    assert cfg.harvested_rows == [3, 11] and cfg.harvesting_mask == 2056
    pybuda.set_configuration_options(default_math_fidelity=MathFidelity.LoFi)
    assert cfg.default_math_fidelity is MathFidelity.LoFi


def test_op_overrides_recorded_and_checked():
    cfg = _cfg()
    pybuda.config.override_op_size("mm", (2, 4))
    pybuda.config.override_t_stream_shape("mm", (4, 1))
    pybuda.config.override_dram_parameters("mm", True)
    pybuda.config.override_input_buffer_multiplier("mm", 0, multiplier=4)
    cfg.balancer_op_override("mm", "input_buffer_multiplier", {1: 2})
    assert cfg.balancer_op_overrides["mm"] == {"grid_shape": (2, 4), "t_stream_shape": (4, 1),
                                              "force_dram_parameters": True, "input_buffer_multiplier": {0: 4, 1: 2}}
    assert cfg.op_size_overrides == {"mm": (2, 4)}
    with pytest.raises(ValueError, match="one dimension at a time"):
        pybuda.config.override_t_stream_shape("mm", (2, 2))
    with pytest.raises(ValueError, match="did you mean 'grid_shape'"):
        cfg.balancer_op_override("mm", "grid_shap", (1, 1))
    pybuda.config.override_multi_op_fracture_factor("conv", 3)
    assert cfg.conv_multi_op_fracture_factor_override == {"conv": 3}


def test_result_key_follows_results_not_no_effect_fields():
    a, b = CompilerConfig(), CompilerConfig()
    b.enable_auto_fusing = False
    b.retain_tvm_python_files = True
    assert a.result_key() == b.result_key()
    b.default_df_override = DataFormat.Bfp8_b
    assert a.result_key() != b.result_key()
    c = CompilerConfig()
    c.enable_amp_light(2)
    assert a.result_key() != c.result_key()


def _resolve(op_type, **options):
    pybuda.set_configuration_options(**options)
    return _cfg().numerics().resolve(op_type, "op")


def test_amp_level_2_is_the_a_format_preset():
    assert _resolve("Add", amp_level=2).output_df is DataFormat.Bfp8
    assert _resolve("Softmax").output_df is DataFormat.Float16
    assert _resolve("Matmul").accumulate_df is DataFormat.Float16


def test_amp_level_follows_the_default_format_family():
    # as in PyBuda: with a default_df_override, a b format selects the b preset whatever the level
    assert _resolve("Add", amp_level=2, default_df_override=DataFormat.Float16_b).output_df is DataFormat.Bfp8_b
    assert _resolve("Add", amp_level=1, default_df_override=DataFormat.Float16).output_df is DataFormat.Bfp8


def test_amp_level_3_and_0_apply_no_preset():
    pybuda.set_configuration_options(amp_level=3)
    with pytest.warns(RuntimeWarning, match="amp_level=3"):
        assert _cfg().numerics().rules == []
    _cfg().amp_level = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _cfg().numerics().resolve("Add", "a").output_df is DataFormat.Float16_b


@pytest.mark.parametrize("level, weight_df, fidelity", [(1, DataFormat.Bfp8, MathFidelity.HiFi2),
                                                        (3, DataFormat.Bfp4, MathFidelity.LoFi)])
def test_enable_amp_light(level, weight_df, fidelity):
    _cfg().enable_amp_light(level)
    n = _cfg().numerics().resolve("Matmul", "mm")
    assert (n.weight_df, n.math_fidelity) == (weight_df, fidelity)
