"""OPT causal language model, PyBuda demo style (use_cache off, as the demos do)."""

import pybuda
import torch
from transformers import OPTConfig, OPTForCausalLM


def run_opt_causal_lm():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda.DataFormat.Float16_b
    compiler_cfg.enable_auto_fusing = False

    torch.manual_seed(0)
    config = OPTConfig(vocab_size=128, hidden_size=64, num_hidden_layers=1, ffn_dim=128, num_attention_heads=2,
                       max_position_embeddings=64, word_embed_proj_dim=64, use_cache=False)
    model = OPTForCausalLM(config).eval()

    input_ids = torch.randint(3, 128, (1, 32))
    attention_mask = torch.ones_like(input_ids)
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_opt_causal_lm", model),
                                    inputs=[(input_ids, attention_mask)])
    output = output_q.get()
    print("Next token:", output[0].value()[0, -1].argmax().item())
    with torch.no_grad():
        return output, model(input_ids, attention_mask)


if __name__ == "__main__":
    run_opt_causal_lm()
