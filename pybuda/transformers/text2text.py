"""text2text-generation, summarization and translation for `pybuda.transformers.pipeline.pipeline`.

transformers 5 removed these three pipelines; PyBuda's T5 and Flan-T5 demos call
"text2text-generation". They are the same tasks here over the model's tokenizer and `generate`,
with transformers 4's output: one dict per returned sequence, `generated_text` / `summary_text` /
`translation_text` (or `..._token_ids` with return_tensors=True); a list of inputs gives a list of
such lists, flattened when each input returns one sequence. The prefix and generation settings in
`config.task_specific_params[task]` apply (T5's "translate English to German: ", ...). The model
generates on the device (tvm_buda.generation.seq2seq: encoder, cached decoder steps).
"""

from __future__ import annotations

import re

TASKS = ("text2text-generation", "summarization", "translation")
_TRANSLATION = re.compile(r"^translation_([A-Za-z_-]+)_to_([A-Za-z_-]+)$")


def is_text2text_task(task) -> bool:
    return isinstance(task, str) and (task in TASKS or bool(_TRANSLATION.match(task)))


def text2text_pipeline(task: str, model, tokenizer, cache_len: int | None = None, **kwargs):
    """The pipeline object for `task` with `model` (an encoder-decoder object) on the device."""
    from tvm_buda.generation.seq2seq import on_device

    if model is None or isinstance(model, str) or tokenizer is None or isinstance(tokenizer, str):
        raise ValueError(f"{task}: pass the model and tokenizer objects (nothing is downloaded)")
    if not getattr(model.config, "is_encoder_decoder", False):
        raise ValueError(f"{task} takes an encoder-decoder model (T5, BART, mBART, Pegasus, Marian...), not "
                         f"{type(model).__name__}; a decoder-only model takes text-generation")
    on_device(model, cache_len=cache_len)
    if task == "summarization":
        return SummarizationPipeline(model, tokenizer, **kwargs)
    if task == "text2text-generation":
        return Text2TextGenerationPipeline(model, tokenizer, **kwargs)
    return TranslationPipeline(model, tokenizer, task=task, **kwargs)


class Text2TextGenerationPipeline:
    """Callable like transformers 4's: pipe("text" or [texts], **generate_kwargs) -> [{"generated_text": ...}]."""

    task = "text2text-generation"
    return_name = "generated"

    def __init__(self, model, tokenizer, task: str | None = None, prefix: str | None = None, **generate_kwargs):
        self.model, self.tokenizer = model, tokenizer
        self.task = task or self.task
        params = dict((getattr(model.config, "task_specific_params", None) or {}).get(self.task, {}))
        configured = params.pop("prefix", None) or getattr(model.config, "prefix", None)
        self.prefix = prefix if prefix is not None else (configured or "")
        self.generate_kwargs = {**params, **generate_kwargs}

    def __call__(self, inputs, *, return_tensors: bool = False, return_text: bool = True,
                 clean_up_tokenization_spaces: bool = False, truncation: bool = False, **generate_kwargs):
        import torch

        single = isinstance(inputs, str)
        texts = [inputs] if single else list(inputs) if isinstance(inputs, (list, tuple)) else None
        if not texts or not all(isinstance(t, str) for t in texts):
            raise TypeError(f"{self.task}: pass a string or a non-empty list of strings, not {type(inputs).__name__}")
        encoded, extra = self._tokenize(texts, truncation, generate_kwargs)
        with torch.no_grad():
            sequences = self.model.generate(**encoded, **{**self.generate_kwargs, **extra, **generate_kwargs})
        per_input = sequences.shape[0] // len(texts)
        results = [[self._record(row, return_tensors, return_text, clean_up_tokenization_spaces)
                    for row in sequences[i * per_input:(i + 1) * per_input]] for i in range(len(texts))]
        if single:
            return results[0]
        return [r[0] for r in results] if per_input == 1 else results

    def _tokenize(self, texts: list[str], truncation: bool, generate_kwargs: dict):
        """(model inputs, generate settings the tokenization implies)."""
        encoded = self.tokenizer([self.prefix + t for t in texts], padding=len(texts) > 1, truncation=truncation,
                                 return_tensors="pt")
        return {k: v for k, v in encoded.items() if k in ("input_ids", "attention_mask")}, {}

    def _record(self, row, return_tensors: bool, return_text: bool, clean_up: bool) -> dict:
        record = {}
        if return_tensors:
            record[f"{self.return_name}_token_ids"] = row
        if return_text:
            record[f"{self.return_name}_text"] = self.tokenizer.decode(row, skip_special_tokens=True,
                                                                       clean_up_tokenization_spaces=clean_up)
        return record


class SummarizationPipeline(Text2TextGenerationPipeline):
    task = "summarization"
    return_name = "summary"


class TranslationPipeline(Text2TextGenerationPipeline):
    """"translation" (languages from src_lang=/tgt_lang=) or "translation_xx_to_yy". A tokenizer with
    language codes (mBART's, NLLB's) builds the inputs and the forced first target token."""

    task = "translation"
    return_name = "translation"

    def __init__(self, model, tokenizer, task: str = "translation", src_lang: str | None = None,
                 tgt_lang: str | None = None, **kwargs):
        super().__init__(model, tokenizer, task=task, **kwargs)
        match = _TRANSLATION.match(task)
        self.src_lang = src_lang or (match.group(1) if match else None)
        self.tgt_lang = tgt_lang or (match.group(2) if match else None)

    def __call__(self, inputs, *, src_lang: str | None = None, tgt_lang: str | None = None, **kwargs):
        self._langs = (src_lang or self.src_lang, tgt_lang or self.tgt_lang)
        return super().__call__(inputs, **kwargs)

    def _tokenize(self, texts, truncation, generate_kwargs):
        build = getattr(self.tokenizer, "_build_translation_inputs", None)
        src, tgt = self._langs
        if build is None or src is None or tgt is None:
            return super()._tokenize(texts, truncation, generate_kwargs)
        encoded = build([self.prefix + t for t in texts], return_tensors="pt", truncation=truncation,
                        src_lang=src, tgt_lang=tgt, padding=len(texts) > 1)
        extra = {"forced_bos_token_id": int(encoded.pop("forced_bos_token_id"))} \
            if "forced_bos_token_id" in encoded else {}
        return {k: v for k, v in encoded.items() if k in ("input_ids", "attention_mask")}, extra
