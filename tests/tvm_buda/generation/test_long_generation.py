"""Generation past the first tile of cache slots is exact bookkeeping: positions, the padding mask and the slots
each step writes stay right for a batch of two (left padding) over 40 new tokens (a 64-slot cache, decode steps
at slots 7-46).

The multiplier's fidelity is what makes Float32/HiFi4 differ from eager (TF32 operands): here its products are
made plain float32 products, so anything else that goes wrong (a position, a mask, a slot, mixed-up rows) shows
as a logit difference far above float32 rounding, and a different token."""

import numpy as np
import pytest
import torch

import pybuda
from tests.tvm_buda.generation.tiny_lms import generate_both

NEW_TOKENS = 40


def _exact_product(a, b, *args, **kwargs):
    return np.matmul(np.asarray(a, np.float32), np.asarray(b, np.float32))


def _exact_multiply(a, b, *args, **kwargs):
    return np.multiply(np.asarray(a, np.float32), np.asarray(b, np.float32))


@pytest.fixture
def exact_multiplier(monkeypatch):
    import buda_runtime_sim.kernels.eltwise as eltwise
    import buda_runtime_sim.kernels.matmul as matmul

    monkeypatch.setattr(matmul, "matmul_with_fidelity", _exact_product)
    monkeypatch.setattr(eltwise, "fidelity_multiply", _exact_multiply)


def test_forty_tokens_beyond_the_first_tile_equal_eager(exact_multiplier):
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")
    golden, out, decoder = generate_both("llama", NEW_TOKENS)
    assert sorted(decoder.programs.compiled) == [(2, 1, 64), (2, 32, 64)]
    assert decoder.steps == NEW_TOKENS
    error = (torch.stack(out.logits) - torch.stack(golden.logits)).abs().amax(dim=(1, 2))
    assert float(error.max()) < 1e-4, f"logits off by {error.max():.3g} at step {int(error.argmax())}"
    assert out.sequences.tolist() == golden.sequences.tolist()
