"""The non-finite check (finite_check.py) on PyBudaModules run by a TTDevice: an inf/NaN the device
made from finite inputs is an error naming the op; the model's own inf (float32 gives it too) is a
warning; non-finite inputs and normal models are silent; the setting turns it to a warning or off."""

import warnings

import numpy as np
import pytest

import pybuda
from buda_runtime_sim import finite_check
from buda_runtime_sim.finite_check import NonFiniteResultError


class ScaledReciprocal(pybuda.PyBudaModule):
    """1 / (2x): in Float16, x = 1e-9 is stored as 0 and the device divides by 0; float32 gives 5e8."""

    def forward(self, x):
        return pybuda.op.Reciprocal("recip", pybuda.op.Multiply("scale", x, 2.0))


class LogOfRelu(pybuda.PyBudaModule):
    """log(relu(x)): -inf where x <= 0, in float32 as on the device (the model's own arithmetic)."""

    def forward(self, x):
        return pybuda.op.Log("log", pybuda.op.Relu("relu", x))


def _run(module, x):
    pybuda.shutdown()
    pybuda.TTDevice("tt0", module=module)
    return pybuda.run_inference(inputs=[(x,)]).get()[0].value()


def _tiny(value=1e-9):
    x = np.full((1, 32, 32), 1.0, np.float32)
    x[0, 3, :5] = value
    return x


def test_device_made_inf_is_an_error_naming_the_op():
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float16)
    with pytest.raises(NonFiniteResultError, match=r"op 'recip' \(Reciprocal.*gave 5 of 1024 values inf/NaN") as info:
        _run(ScaledReciprocal("sr"), _tiny())
    culprit = info.value.culprit
    assert (culprit.name, culprit.op_type, culprit.float32_finite) == ("recip", "Reciprocal", True)
    assert culprit.output_df == pybuda.DataFormat.Float16 and culprit.operand_shapes == ((1, 32, 32),)
    assert "float32 gives finite values there" in str(info.value)


def test_warn_setting_returns_the_result_with_a_warning(monkeypatch):
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float16)
    pybuda.config._get_global_compiler_config().check_finite = "warn"
    with pytest.warns(RuntimeWarning, match="op 'recip'"):
        out = np.asarray(_run(ScaledReciprocal("sr"), _tiny()))
    assert np.isinf(out[0, 3, :5]).all() and np.isfinite(out[0, 4]).all()


@pytest.mark.parametrize("how", ["env", "config", "env-wins"])
def test_off_runs_unchecked(monkeypatch, how):
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float16)
    if how in ("env", "env-wins"):
        monkeypatch.setenv("PYBUDA_CHECK_FINITE", "0")
    if how in ("config", "env-wins"):
        pybuda.config._get_global_compiler_config().check_finite = "off" if how == "config" else "error"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = np.asarray(_run(ScaledReciprocal("sr"), _tiny()))
    assert np.isinf(out[0, 3, :5]).all()


def test_the_models_own_inf_is_one_warning_not_an_error():
    module = LogOfRelu("lr")
    with pytest.warns(RuntimeWarning, match=r"op 'log'.*float32 gives inf/NaN there too"):
        out = np.asarray(_run(module, _tiny(-1.0)))
    assert np.isneginf(out[0, 3, :5]).all()
    with warnings.catch_warnings():     # settled: not diagnosed (nor warned about) again
        warnings.simplefilter("error")
        _run(module, _tiny(-1.0))


def test_non_finite_inputs_and_finite_results_are_silent():
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = np.asarray(_run(ScaledReciprocal("sr"), _tiny(np.nan)))      # NaN in: not the device's doing
        assert np.isnan(out[0, 3, :5]).all()
        assert np.isfinite(np.asarray(_run(ScaledReciprocal("sr"), _tiny(0.25)))).all()


def test_settings_are_checked():
    assert [finite_check.parse_mode(v) for v in ("1", "error", True, "warn", "0", "off", False, None)] == \
        ["error", "error", "error", "warn", "off", "off", "off", "error"]
    with pytest.raises(ValueError, match="check_finite must be one of"):
        pybuda.config._get_global_compiler_config().check_finite = "loud"
