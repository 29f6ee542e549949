"""bfloat16 framework models (`model.to(torch.bfloat16)`, `from_pretrained(..., torch_dtype=torch.bfloat16)`)
import, run, give PyTorch's dtype back, and their Float16_b device weights are the framework's own bytes.
Before, the import failed: numpy's DLPack has no bfloat16 ("Unsupported dtype in DLTensor")."""

import numpy as np
import pytest
import torch

import tvm_buda
from buda_runtime_sim import stored_tensor
from buda_runtime_sim.stored_tensor import StoredTensor
from tests.helpers import assert_matches_golden


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                         vocab_size=256, num_hidden_layers=2, max_position_embeddings=64, use_cache=False)
    return LlamaForCausalLM(config), torch.randint(0, 256, (1, 16))


def _bert():
    from transformers import BertConfig, BertForQuestionAnswering

    config = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                        vocab_size=256, max_position_embeddings=64)
    return BertForQuestionAnswering(config), torch.randint(0, 256, (1, 16))


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


@pytest.mark.parametrize("build", [_llama, _bert], ids=["llama", "bert-qa"])
def test_a_bfloat16_model_matches_pytorch(build):
    torch.manual_seed(0)
    model, ids = build()
    model = model.eval().to(torch.bfloat16)
    with torch.no_grad():
        golden = model(ids, return_dict=False)
    out = tvm_buda.compile_model(model, (ids,), name=f"bf16_{build.__name__[1:]}").run(ids)
    assert _first(out).dtype == torch.bfloat16       # PyTorch's dtype (TVM's matmul import asked float32)
    assert_matches_golden(_first(out).float(), _first(golden).float())


class _Scaled(torch.nn.Module):
    """x @ w with the weight read as it is (no transpose kept beside it), times a norm-like row."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64, 128))
        self.scale = torch.nn.Parameter(torch.randn(1, 128))

    def forward(self, x):
        return torch.matmul(x, self.w) * self.scale


def test_a_float16_b_device_weight_is_the_framework_weights_bytes(monkeypatch):
    monkeypatch.setattr(stored_tensor, "MIN_ELEMENTS", 64)       # these small weights held as bytes
    torch.manual_seed(0)
    model = _Scaled().eval().to(torch.bfloat16)
    x = torch.randn(32, 64).to(torch.bfloat16)
    compiled = tvm_buda.compile_model(model, (x,), name="bf16_shared")
    out = compiled.run(x)
    assert_matches_golden(out.float(), model(x).detach().float())
    framework = {name: p.detach().view(torch.int16).numpy() for name, p in model.named_parameters()}
    copies = [t for sub, _ in compiled.subgraphs for p in sub.module.get_parameters()
              for t in p._device_copies.values()]
    assert len(copies) == 2 and all(type(t) is StoredTensor for t in copies)
    for tensor in copies:                             # each shares one framework weight's memory: no copy
        assert sum(np.shares_memory(tensor.codec.array, array) for array in framework.values()) == 1
