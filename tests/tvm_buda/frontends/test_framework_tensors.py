"""Tensor.to_framework: device outputs as torch, TF, JAX or numpy tensors."""

import sys

import numpy as np
import pytest
import torch

from buda_runtime_sim.framework_tensors import to_framework
from buda_runtime_sim.tensor import Tensor


def test_every_framework_gets_its_own_tensor_type(tf):
    jnp = pytest.importorskip("jax.numpy")
    tensor = Tensor.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    expected = {"pytorch": torch.Tensor, "torch": torch.Tensor, "tensorflow": tf.Tensor, "tf": tf.Tensor,
                "jax": type(jnp.zeros(1)), "numpy": np.ndarray}
    for framework, kind in expected.items():
        value = tensor.to_framework(framework)
        assert isinstance(value, kind), framework
        np.testing.assert_array_equal(np.asarray(value), tensor.numpy())


def test_integer_dtypes_survive():
    ids = np.array([[1, 2, 3]], dtype=np.int64)
    assert to_framework(ids, "pytorch").dtype == torch.int64
    assert to_framework(ids, "numpy").dtype == np.int64


def test_unknown_and_missing_frameworks_are_clear_errors(monkeypatch):
    with pytest.raises(ValueError, match="unknown framework 'mxnet'"):
        to_framework(np.zeros(1), "mxnet")
    monkeypatch.setitem(sys.modules, "jax", None)
    monkeypatch.setitem(sys.modules, "jax.numpy", None)
    with pytest.raises(ImportError, match=r"pip install 'tvm-buda\[jax\]'"):
        to_framework(np.zeros(1), "jax")
