"""Mixture-of-experts layers (transformers 5 runs them as a grouped GEMM through its own operator and
`histc`, which no importer knows) import as transformers' batched-GEMM experts, the same math, and match
eager; the user's model keeps its own setting."""

import numpy as np
import pytest
import torch

import tvm_buda
from tests.helpers import assert_matches_golden


def _mixtral():
    from transformers import MixtralConfig, MixtralModel

    return MixtralModel(MixtralConfig(vocab_size=100, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                                      num_experts_per_tok=2, max_position_embeddings=64))


def _qwen2_moe():
    from transformers import Qwen2MoeConfig, Qwen2MoeModel

    return Qwen2MoeModel(Qwen2MoeConfig(vocab_size=100, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, num_experts=4,
                                        num_experts_per_tok=2, moe_intermediate_size=48,
                                        shared_expert_intermediate_size=64, max_position_embeddings=64))


@pytest.mark.parametrize("build", [_mixtral, _qwen2_moe], ids=["mixtral", "qwen2_moe"])
def test_experts_import_and_match_eager(build):
    torch.manual_seed(0)
    model = build().eval()
    before = model.config._experts_implementation
    assert before not in (None, "batched_mm"), "the default is the implementation no importer takes"
    ids = torch.randint(0, 100, (1, 16), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        golden = model(input_ids=ids).last_hidden_state
    compiled = tvm_buda.compile_model(model, {"input_ids": ids}, name=f"moe_{build.__name__}")
    out = compiled.run(ids)
    out = out[0] if isinstance(out, (tuple, list)) else out
    assert_matches_golden(torch.as_tensor(np.asarray(out)), golden)
    assert model.config._experts_implementation == before      # put back after the trace
