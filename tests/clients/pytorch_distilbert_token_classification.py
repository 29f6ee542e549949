"""DistilBERT token classification, PyBuda demo style: a DistilBERT tokenizer's BatchEncoding in."""

import pybuda
import torch
from transformers import DistilBertConfig, DistilBertForTokenClassification

from tests.clients.local_tokenizers import distilbert_tokenizer, vocab_size


def run_distilbert_token_classification():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.balancer_policy = "Ribbon"

    torch.manual_seed(0)
    config = DistilBertConfig(vocab_size=vocab_size(), dim=64, n_layers=1, n_heads=2, hidden_dim=128,
                              max_position_embeddings=64, num_labels=5)
    model = DistilBertForTokenClassification(config).eval()
    tokenizer = distilbert_tokenizer()
    input_tokens = tokenizer("the panthers played the broncos in the american football league title game",
                             max_length=32, padding="max_length", truncation=True, return_tensors="pt")

    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_distilbert_token_classification", model),
                                    inputs=[input_tokens])
    output = output_q.get()
    print("Predicted labels:", output[0].value()[0].argmax(-1).tolist())
    with torch.no_grad():
        return output, model(**input_tokens)


if __name__ == "__main__":
    run_distilbert_token_classification()
