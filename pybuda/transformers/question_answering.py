"""Extractive question answering for `pybuda.transformers.pipeline.pipeline("question-answering")`.

transformers 5 removed its question-answering pipeline, which PyBuda's demos call; this is the
same task on any `...ForQuestionAnswering` model: tokenize question and context, run the model (on
the device once wrapped), take the most probable span inside the context (end not before start,
at most `max_answer_len` tokens) and map it back to characters of the context.
"""

from __future__ import annotations


class QuestionAnsweringPipeline:
    """Callable like transformers 4's pipeline: qa(question=..., context=...) -> {score, start, end, answer}."""

    def __init__(self, model, tokenizer, max_seq_len: int = 384, max_answer_len: int = 15):
        if tokenizer is None or not getattr(tokenizer, "is_fast", False):
            raise ValueError("question-answering needs a fast tokenizer (character offsets map the answer back), "
                             "e.g. transformers.BertTokenizerFast")
        self.model, self.tokenizer = model, tokenizer
        self.max_seq_len, self.max_answer_len = max_seq_len, max_answer_len

    def __call__(self, question: str | None = None, context: str | None = None, top_k: int = 1, **kwargs):
        if question is None or context is None:
            raise ValueError("question-answering: pass question= and context=")
        import torch

        encoding = self.tokenizer(question, context, truncation="only_second", max_length=self.max_seq_len,
                                  return_offsets_mapping=True, return_tensors="pt")
        offsets = encoding.pop("offset_mapping")[0]
        context_tokens = torch.tensor([s == 1 for s in encoding.sequence_ids(0)])
        with torch.no_grad():
            out = self.model(**encoding)
        start = _masked_probabilities(out.start_logits[0], context_tokens)
        end = _masked_probabilities(out.end_logits[0], context_tokens)
        scores = torch.triu(start[:, None] * end[None, :])                  # end >= start
        scores = torch.tril(scores, diagonal=self.max_answer_len - 1)       # at most max_answer_len tokens
        best = torch.topk(scores.flatten(), k=min(top_k, scores.numel()))
        answers = []
        for score, index in zip(best.values.tolist(), best.indices.tolist()):
            s, e = divmod(index, scores.shape[1])
            begin, finish = int(offsets[s][0]), int(offsets[e][1])
            answers.append({"score": score, "start": begin, "end": finish, "answer": context[begin:finish]})
        return answers[0] if top_k == 1 else answers


def _masked_probabilities(logits, keep):
    import torch

    return torch.softmax(logits.masked_fill(~keep, float("-inf")), dim=-1)
