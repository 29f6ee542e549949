"""DPR question encoder, PyBuda demo style (a BERT encoder whose pooled [CLS] vector is the embedding)."""

import pybuda
import torch
from transformers import DPRConfig, DPRQuestionEncoder

from tests.clients.local_tokenizers import bert_tokenizer, vocab_size


def run_dpr_question_encoder():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.default_dram_parameters = False
    compiler_cfg.balancer_policy = "Ribbon"

    torch.manual_seed(0)
    config = DPRConfig(vocab_size=vocab_size(), hidden_size=64, num_hidden_layers=1, num_attention_heads=2,
                       intermediate_size=128, max_position_embeddings=64, projection_dim=32)
    model = DPRQuestionEncoder(config).eval()
    input_tokens = bert_tokenizer()("who won the super bowl", max_length=16, padding="max_length",
                                    return_tensors="pt")

    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_dpr_question_encoder", model), inputs=[input_tokens])
    output = output_q.get()
    with torch.no_grad():
        return output, model(**input_tokens)


if __name__ == "__main__":
    run_dpr_question_encoder()
