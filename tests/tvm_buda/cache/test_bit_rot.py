"""Bit rot in a cache entry: weight bytes change while the file keeps its size and modification
time (a failing disk, some backup restores). The entry must not be used: a warning, a rebuild and
right results, never NaN outputs."""

import warnings

import numpy as np
import pytest
import torch

import tvm_buda
from tests.helpers import assert_matches_golden
from tests.models import golden
from tvm_buda.demo_models import mlp

from .entry_files import entries, float_data, rot


def test_rotten_weights_with_size_and_mtime_kept_are_detected(monkeypatch):
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    torch.manual_seed(0)
    model, x = mlp(), torch.randn(8, 64)
    tvm_buda.compile_model(model, (x,), name="mlp")
    (entry,) = entries()
    weights = float_data(entry)
    assert weights, "the entry stores its weights as float32 safetensors"
    rot(entry, weights)
    with pytest.warns(RuntimeWarning, match="unusable"):
        compiled = tvm_buda.compile_model(model, (x,), name="mlp")
    out = compiled.run(x)
    assert np.isfinite(out.numpy()).all()
    assert_matches_golden(out, golden(model, x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # the rebuilt entry is valid: no warning
        tvm_buda.compile_model(model, (x,), name="mlp")
