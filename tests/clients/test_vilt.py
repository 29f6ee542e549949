"""ViLT visual question answering from precomputed embeddings with a float 0/1 attention mask (issue 28):
the device's logits were all NaN while eager's were finite. The mask's fill, finfo(float32).min,
became -inf in Float16_b, and 0 * -inf = NaN where the mask is 1; formats now saturate it."""

import numpy as np
import pybuda
import torch

from buda_runtime_sim.runtime.devices import registered_devices
from tests.clients.pytorch_vilt_question_answering import run_vilt_question_answering


def test_vilt_question_answering_is_finite_and_matches_eager(monkeypatch):
    monkeypatch.delenv("PYBUDA_RIBBON2", raising=False)      # the script sets it, as the demo does
    outputs, golden = run_vilt_question_answering()
    logits = outputs[0].value().numpy() if hasattr(outputs[0].value(), "numpy") else np.asarray(outputs[0].value())
    assert torch.isfinite(golden).all()
    assert np.isfinite(logits).all(), f"{np.count_nonzero(~np.isfinite(logits))} of {logits.size} logits not finite"
    results = pybuda.verify.verify_outputs(outputs, golden, name="vilt")
    assert results[0].pcc >= 0.99
    compiled = [c for d in registered_devices() for c in getattr(d, "compiled", {}).values()]
    assert compiled and all(c.partition_summary().device_fraction == 1.0 for c in compiled)   # the mask runs there
