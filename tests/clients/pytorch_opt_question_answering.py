"""OPT extractive question answering, PyBuda demo style (start and end logits), the config's
default use_cache=True."""

import pybuda
import torch
from transformers import OPTConfig, OPTForQuestionAnswering


def run_opt_question_answering():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda.DataFormat.Float16_b
    compiler_cfg.enable_auto_fusing = False

    torch.manual_seed(0)
    config = OPTConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, ffn_dim=128, num_attention_heads=2,
                       max_position_embeddings=64, word_embed_proj_dim=64, pad_token_id=1)
    model = OPTForQuestionAnswering(config).eval()

    input_ids = torch.randint(3, 128, (1, 32))
    tokens = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_opt_question_answering", model), inputs=[tokens])
    output = output_q.get()
    start, end = (o.value()[0].argmax().item() for o in output)
    print("Answer span:", start, end)
    with torch.no_grad():
        return output, model(**tokens)


if __name__ == "__main__":
    run_opt_question_answering()
