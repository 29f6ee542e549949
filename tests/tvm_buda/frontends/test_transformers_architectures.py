"""transformers architectures that TVM 0.27's importer could not take, or took wrongly, compiled for
the device from tiny random configs and compared with eager PyTorch under PyBuda's rule (each
failed before our converters in tvm_buda/frontends/torch_converters.py)."""

import pytest
import torch

import tvm_buda

from .checks import assert_outputs_match

SEQ = 16


def _deberta_v3():
    from transformers import DebertaV2Config, DebertaV2Model

    # DeBERTa-v3's settings: relative attention over log-bucketed positions (int64 / int, then log)
    return DebertaV2Model(DebertaV2Config(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                          intermediate_size=64, relative_attention=True, position_buckets=8,
                                          pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm",
                                          max_relative_positions=-1, share_att_key=True))


def _convbert():
    from transformers import ConvBertConfig, ConvBertModel

    # span-based dynamic convolution: an unfold, an index with slices before the index tensors
    return ConvBertModel(ConvBertConfig(vocab_size=128, hidden_size=32, embedding_size=32, num_hidden_layers=1,
                                        num_attention_heads=2, intermediate_size=64, conv_kernel_size=5))


def _funnel():
    from transformers import FunnelConfig, FunnelModel

    # relative positions from a descending arange (TVM counted its elements wrongly)
    return FunnelModel(FunnelConfig(vocab_size=128, block_sizes=[1, 1], d_model=32, n_head=2, d_head=16,
                                    d_inner=64, num_decoder_layers=1))


def _falcon():
    from transformers import FalconConfig, FalconModel

    # multi-query attention's key and value heads are the fused heads [-2] and [-1]
    return FalconModel(FalconConfig(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                    ffn_hidden_size=64))


def _siglip_text():
    from transformers import SiglipTextConfig, SiglipTextModel

    # the pooled output is the last token's state, x[:, -1, :]
    return SiglipTextModel(SiglipTextConfig(vocab_size=128, hidden_size=32, intermediate_size=64,
                                            num_hidden_layers=1, num_attention_heads=2, max_position_embeddings=SEQ,
                                            pad_token_id=1, bos_token_id=2, eos_token_id=3))


MODELS = {"deberta_v3": _deberta_v3, "convbert": _convbert, "funnel": _funnel, "falcon": _falcon,
          "siglip_text": _siglip_text}


@pytest.mark.parametrize("name", MODELS)
def test_architecture_matches_pytorch(name):
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    ids = torch.randint(4, 128, (1, SEQ), generator=torch.Generator().manual_seed(1))
    feed = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    compiled = tvm_buda.compile_model(model, (feed,), name=name)
    with torch.no_grad():
        golden = model(**feed)
    outputs = compiled.run(feed)
    expected = tuple(v for v in golden.to_tuple() if isinstance(v, torch.Tensor))
    assert_outputs_match(outputs if isinstance(outputs, tuple) else (outputs,), expected, name)
    assert compiled.partition_summary().device_fraction >= 0.5
