"""BERT question answering, PyBuda demo style: tokenizer output straight into run_inference.

Random weights (BertConfig, 2 layers, hidden 64) and a local vocabulary stand in for the
pretrained checkpoint and its tokenizer.
"""

import os

import pybuda
import torch
from transformers import BertConfig, BertForQuestionAnswering

from tests.clients.local_tokenizers import bert_tokenizer, vocab_size


def run_bert_question_answering():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.default_dram_parameters = False
    compiler_cfg.balancer_policy = "Ribbon"
    os.environ["PYBUDA_RIBBON2"] = "1"

    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab_size(), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=64)
    model = BertForQuestionAnswering(config).eval()
    tokenizer = bert_tokenizer()

    context = "the denver broncos won the super bowl title at the stadium in the bay area of california"
    question = "which team won the super bowl"
    input_tokens = tokenizer(question, context, max_length=32, padding="max_length", truncation=True,
                             return_tensors="pt")

    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_bert_question_answering", model), inputs=[input_tokens])
    output = output_q.get()

    answer_start = output[0].value().argmax().item()
    answer_end = output[1].value().argmax().item()
    answer = tokenizer.decode(input_tokens["input_ids"][0, answer_start: answer_end + 1])
    print(f"Question: {question}\nAnswer (random weights): {answer!r}")
    with torch.no_grad():
        return output, model(**input_tokens)


if __name__ == "__main__":
    run_bert_question_answering()
