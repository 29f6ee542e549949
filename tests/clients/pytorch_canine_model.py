"""CANINE (character-level encoder without a tokenizer), PyBuda demo style: Unicode code points as
input ids and an all-ones attention mask into run_inference. CANINE builds its additive masks as
(1 - mask) * finfo(float32).min, downsamples characters with a strided convolution and attends
locally, then upsamples back to characters.

Random weights (CanineConfig: 1 deep layer, hidden 32) stand in for the checkpoint.
"""

import pybuda
import torch
from transformers import CanineConfig, CanineModel


class CanineLastHidden(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def run_canine_model():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b

    torch.manual_seed(0)
    config = CanineConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                          max_position_embeddings=256, downsampling_rate=4, num_hash_functions=4,
                          num_hash_buckets=64, local_transformer_stride=16)
    model = CanineLastHidden(CanineModel(config).eval()).eval()

    text = "tiles of thirty-two"
    input_ids = torch.tensor([[ord(c) for c in text.ljust(32)]])     # code points, padded with spaces
    attention_mask = torch.ones_like(input_ids)
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_canine", model), inputs=[(input_ids, attention_mask)])
    output = output_q.get()
    print("Last hidden state:", tuple(output[0].value().shape))
    with torch.no_grad():
        return output, model(input_ids, attention_mask)


if __name__ == "__main__":
    run_canine_model()
