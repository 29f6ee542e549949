"""CLIP text encoder, PyBuda demo style (text half of a CLIP demo)."""

import pybuda
import torch
from transformers import CLIPTextConfig, CLIPTextModel


def run_clip_text():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.enable_enumerate_u_kt = False

    torch.manual_seed(0)
    config = CLIPTextConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                            num_attention_heads=2, max_position_embeddings=32, eos_token_id=127)
    model = CLIPTextModel(config).eval()

    input_ids = torch.randint(1, 126, (2, 16))
    input_ids[:, -1] = 127  # end of text: the pooled output is taken there
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_clip_text", model),
                                    inputs=[{"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}])
    output = output_q.get()
    with torch.no_grad():
        return output, model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))


if __name__ == "__main__":
    run_clip_text()
