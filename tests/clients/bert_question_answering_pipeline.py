"""BERT question answering through PyBuda's transformers pipeline wrapper, PyBuda demo style."""

import copy

import pybuda
import torch
from pybuda.transformers.pipeline import pipeline as pybuda_pipeline
from transformers import BertConfig, BertForQuestionAnswering

from tests.clients.local_tokenizers import bert_tokenizer, vocab_size


def run_bert_question_answering_pipeline():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.balancer_policy = "Ribbon"

    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab_size(), hidden_size=64, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=64)
    model = BertForQuestionAnswering(config).eval()
    framework_model = copy.deepcopy(model)
    tokenizer = bert_tokenizer()

    context = "the denver broncos won the super bowl title at the stadium in the bay area"
    question = "who won the super bowl"
    question_answerer = pybuda_pipeline("question-answering", model=model, tokenizer=tokenizer)
    answer = question_answerer(question=question, context=context)
    print(f"Question: {question}\nAnswer (random weights): {answer}")

    tokens = tokenizer(question, context, return_tensors="pt")
    with torch.no_grad():
        device = model(**tokens)
        golden = framework_model(**tokens)
    return answer, [device.start_logits, device.end_logits], [golden.start_logits, golden.end_logits], model.forward


if __name__ == "__main__":
    run_bert_question_answering_pipeline()
