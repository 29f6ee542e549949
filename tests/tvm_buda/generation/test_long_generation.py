"""Generation past the first tile of cache slots is exact bookkeeping: positions, the padding mask and the slots
each step writes stay right for a batch of two (left padding) over 40 new tokens (a 64-slot cache, decode steps
at slots 7-46).

The multiplier's fidelity is what makes Float32/HiFi4 differ from eager (TF32 operands): here its products are
made plain float32 products, so anything else that goes wrong (a position, a mask, a slot, mixed-up rows) shows
as a logit difference far above float32 rounding, and a different token."""

import copy

import numpy as np
import pytest
import torch

import pybuda
from pybuda.config import _get_global_compiler_config
from tests.tvm_buda.generation.tiny_lms import make
from tvm_buda.generation import CachedDecoder

NEW_TOKENS = 40
PROMPT = 7


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


def _no_fallback(*args, **kwargs):
    raise AssertionError("a generate step left the device cache path")


def test_forty_tokens_beyond_the_first_tile_equal_eager(exact_multiplier):
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32,
                                     math_fidelity=pybuda.MathFidelity.HiFi4, device_config="wh_n150")
    torch.manual_seed(0)
    model = make("llama")
    golden_model = copy.deepcopy(model)
    ids = torch.randint(3, 250, (2, PROMPT), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    ids[1, :3], mask[1, :3] = 0, 0
    kwargs = dict(attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True,
                  return_dict_in_generate=True)
    with torch.no_grad():
        golden = golden_model.generate(ids, **kwargs)
    decoder = CachedDecoder.install(model, fallback=_no_fallback, config=_get_global_compiler_config().copy())
    out = model.generate(ids, **kwargs)
    assert sorted(decoder.programs.compiled) == [(2, 1, 64), (2, 32, 64)]
    assert decoder.steps == NEW_TOKENS
    error = (torch.stack(out.logits) - torch.stack(golden.logits)).abs().amax(dim=(1, 2))
    assert float(error.max()) < 1e-4, f"logits off by {error.max():.3g} at step {int(error.argmax())}"
    assert out.sequences.tolist() == golden.sequences.tolist()
