"""JAX route (jax2tf -> TF graph -> TFLite -> Relax): jax arrays in and out, pytree outputs."""

import numpy as np
import pytest

import pybuda
import tvm_buda
from tvm_buda.modules import JaxModule

from . import jax_models
from .checks import assert_outputs_match

jax = pytest.importorskip("jax")


@pytest.mark.parametrize("kind", ["mlp", "cnn", "block", "emb_cumsum"])
def test_model_matches_jax(tf, kind):
    fn = jax_models.BUILDERS[kind]()
    compiled = tvm_buda.compile_model(JaxModule(kind, fn), (jax_models.sample(kind),))
    x = jax.numpy.asarray(jax_models.sample(kind, seed=1))
    out = compiled.run(x)
    assert isinstance(out, jax.Array)
    assert_outputs_match(out, fn(x), kind)


def test_dict_and_tuple_outputs_and_named_inputs(tf):
    as_dict, as_tuple = jax_models.heads()
    x, bias = jax_models.sample("mlp", batch=3), np.linspace(-1, 1, 8, dtype=np.float32)
    compiled = tvm_buda.compile_model(JaxModule("heads", as_dict), (x, bias))
    assert [s.name for s in compiled.imported.inputs] == ["x", "bias"]
    out = compiled.run(x, bias=bias)
    assert list(out) == ["activations", "logits", "probs"]  # a JAX pytree: dict keys sorted, as jax.jit returns
    assert_outputs_match(out, jax.jit(as_dict)(x, bias))
    compiled = tvm_buda.compile_model(JaxModule("heads_tuple", as_tuple), (x, bias))
    assert_outputs_match(compiled.run(x, bias), as_tuple(x, bias))


def test_jax_module_on_tt_device_through_run_inference(tf):
    fn = jax_models.mlp()
    x = jax_models.sample("mlp")
    pybuda.TTDevice("tt0", module=JaxModule("mlp_tt", fn))
    outputs = pybuda.run_inference(inputs=[(x,)]).get()
    assert_outputs_match(outputs[0].to_framework("jax"), fn(x))


def test_jax_module_rejects_non_callables():
    with pytest.raises(TypeError, match="JAX-traceable callable"):
        JaxModule("bad", {"w": np.ones(3)})
