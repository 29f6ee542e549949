"""`pybuda.transformers.pipeline.pipeline`: `transformers.pipeline` whose model runs on the simulated device.

"question-answering", which transformers 5 no longer has, is served by question_answering.py;
"text2text-generation", "summarization" and "translation[_xx_to_yy]" by text2text.py. PyBuda's
`pipeline(pipeline_type=..., pybuda_max_length=...)` keywords are accepted beside `task=`/`pad_to=`.
Encoder-decoders that generate (T5, BART, mBART, Pegasus, Marian, Whisper: text2text tasks and
"automatic-speech-recognition") run their encoder and cached decoder steps on the device
(tvm_buda.generation.seq2seq; `pad_to` is then the decoder cache length).

The pipeline's tokenizer, pre- and post-processing and generation loop stay on the host, as in
PyBuda; every call of the model's forward runs the compiled model on the simulator instead. A
model is compiled once per input signature (names, shapes, dtypes). For causal language models
(text generation) the inputs are padded on the right to a fixed length, so the growing sequence
of a generation loop reuses one compiled model; causal attention keeps the real positions exact,
and the padded positions are cut from the outputs. Causal LMs that can take a static KV cache
generate with it on the device (tvm_buda.generation); the others without a cache (`use_cache=False`).
A text-generation call decodes greedily unless it asks to sample (text_generation.py).
"""

from __future__ import annotations

import inspect

# forward arguments that carry no tensor for the device (dropped; the model recomputes or ignores them)
_HOST_ONLY = frozenset({"cache", "past_key_values", "cache_position", "use_cache", "return_dict", "output_attentions",
                        "output_hidden_states", "logits_to_keep", "labels"})


def pipeline(task: str | None = None, model=None, tokenizer=None, *args, pad_to: int | None = None,
             pipeline_type: str | None = None, pybuda_max_length: int | None = None, **kwargs):
    """`transformers.pipeline(task, model=..., tokenizer=..., ...)` with the model's forward on the device.

    `pad_to` fixes the padded sequence length for causal language models (default: the model's
    maximum positions). `pipeline_type` and `pybuda_max_length` are PyBuda's names for `task` and `pad_to`.
    """
    import transformers

    task = _same("task", task, "pipeline_type", pipeline_type)
    pad_to = _same("pad_to", pad_to, "pybuda_max_length", pybuda_max_length)
    from .text2text import is_text2text_task, text2text_pipeline

    if is_text2text_task(task) and not _has_task(task):  # removed in transformers 5
        return text2text_pipeline(task, model, tokenizer, cache_len=pad_to, **kwargs)
    if task == "question-answering" and not _has_task(task):  # removed in transformers 5
        from .question_answering import QuestionAnsweringPipeline

        if model is None or isinstance(model, str) or tokenizer is None or isinstance(tokenizer, str):
            raise ValueError("question-answering: pass the model and tokenizer objects (nothing is downloaded)")
        return QuestionAnsweringPipeline(run_forward_on_device(model, pad_to=pad_to), tokenizer, **kwargs)
    pipe = transformers.pipeline(task, *args, model=model, tokenizer=tokenizer, **kwargs)
    run_forward_on_device(pipe.model, pad_to=pad_to)
    if getattr(pipe, "task", task) == "text-generation":
        from .text_generation import greedy_unless_asked

        greedy_unless_asked(pipe)
    return pipe


def _same(name: str, value, alias: str, alias_value):
    """One setting given under either of its two names (not both, unless equal)."""
    if alias_value is None:
        return value
    if value is not None and value != alias_value:
        raise ValueError(f"pipeline: {name}={value!r} and {alias}={alias_value!r} disagree; give one of them")
    return alias_value


def _has_task(task: str) -> bool:
    from transformers.pipelines import SUPPORTED_TASKS

    return task in SUPPORTED_TASKS


def run_forward_on_device(model, pad_to: int | None = None):
    """Replace `model.forward` (on this instance) by one that runs the model on the simulated device.

    A causal LM that can take a static KV cache generates through tvm_buda.generation.CachedDecoder (a
    prefill and a decode program, the cache on the device); calls without that cache, and the models
    that cannot take one (a one-line notice says why), run the padded whole sequence each call. An
    encoder-decoder runs its encoder once and its decoder steps against caches on the device
    (tvm_buda.generation.seq2seq).
    """
    if getattr(model.forward, "runs_on_device", False):
        return model
    if getattr(model.config, "is_encoder_decoder", False) and hasattr(model, "get_encoder") \
            and model.can_generate():   # encoder once, cached decoder steps
        from tvm_buda.generation.seq2seq import on_device

        return on_device(model, cache_len=pad_to)
    device_forward = _DeviceForward(model, pad_to)
    if device_forward.causal:
        from tvm_buda.generation import CachedDecoder

        if CachedDecoder.install(model, fallback=device_forward) is not None:
            return model
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.use_cache = False
    model.forward = device_forward
    return model


class _DeviceForward:
    runs_on_device = True

    def __init__(self, model, pad_to: int | None):
        self.model = model
        self.original = model.forward
        self.signature = inspect.signature(self.original)
        # transformers reads the forward's signature to decide what to pass (generate builds position_ids
        # from the attention mask only for a forward that takes position_ids): show it the model's own
        self.__signature__ = self.signature
        self.causal = _is_causal(model)
        self.pad_to = pad_to or (_max_positions(model.config) if self.causal else None)
        self.compiled: dict[tuple, object] = {}

    def __call__(self, *args, **kwargs):
        import torch

        bound = self.signature.bind_partial(*args, **kwargs).arguments
        cache = bound.get("cache", bound.get("past_key_values"))
        if cache not in (None, ()) and _cache_length(cache):
            raise NotImplementedError("pybuda.transformers.pipeline runs without a KV cache; generate with "
                                      "use_cache=False (the pipeline sets it in the model's generation_config)")
        extra = bound.pop("kwargs", {}) or {}
        tensors = {k: v for k, v in {**bound, **extra}.items()
                   if k not in _HOST_ONLY and isinstance(v, torch.Tensor)}
        length = tensors["input_ids"].shape[1] if "input_ids" in tensors else None
        if self.causal and length is not None:
            tensors = _pad_sequence(tensors, length, self.pad_to)
        names = tuple(tensors)
        key = tuple((n, tuple(t.shape), str(t.dtype)) for n, t in tensors.items())
        compiled = self.compiled.get(key)
        if compiled is None:
            compiled = self.compiled[key] = self._compile(names, tensors)
        outputs = compiled.run(*tensors.values())
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        if self.causal and length is not None:
            outputs = tuple(o[:, :length] if o.dim() >= 2 and o.shape[1] == self.pad_to else o for o in outputs)
        return compiled.output_type(**dict(zip(compiled.output_keys, outputs)))

    def _compile(self, names, tensors):
        import torch
        import tvm_buda
        from buda_runtime_sim.config import _get_global_compiler_config

        extra = {"use_cache": False} if "use_cache" in self.signature.parameters else {}
        with torch.no_grad():
            sample = self.original(**tensors, return_dict=True, **extra)
        keys = [k for k, v in sample.items() if isinstance(v, torch.Tensor)]
        core = _tensor_forward(self.original.__self__, names, keys, extra)
        name = f"{type(self.model).__name__.lower()}_pipeline"
        compiled = tvm_buda.compile_model(tvm_buda.PyTorchModule(name, core), tuple(tensors.values()),
                                          config=_get_global_compiler_config().copy())
        compiled.output_keys, compiled.output_type = keys, type(sample)
        return compiled


def _tensor_forward(model, names, output_keys, extra):
    """A module taking the named tensors positionally and returning the model's tensor outputs as a
    tuple: what torch.export traces. It calls the model class's own forward, not the device one."""
    import torch

    class TensorForward(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, *tensors):
            out = type(self.inner).forward(self.inner, **dict(zip(names, tensors)), return_dict=True, **extra)
            return tuple(out[k] for k in output_keys)

    return TensorForward()


def _pad_sequence(tensors: dict, length: int, pad_to: int) -> dict:
    import torch

    if length > pad_to:
        raise ValueError(f"sequence of {length} tokens is longer than the padded length {pad_to}; "
                         "pass pad_to= to pybuda.transformers.pipeline.pipeline (at most the model's positions)")
    out = {}
    for name, t in tensors.items():
        if t.dim() >= 2 and t.shape[1] == length and pad_to > length:
            pad = torch.zeros((t.shape[0], pad_to - length, *t.shape[2:]), dtype=t.dtype)
            t = torch.cat([t, pad], dim=1)
        out[name] = t
    if "attention_mask" not in out and "input_ids" in out:  # padded positions must not be attended
        mask = torch.zeros(out["input_ids"].shape[:2], dtype=torch.int64)
        mask[:, :length] = 1
        out["attention_mask"] = mask
    return out


def _is_causal(model) -> bool:
    config = model.config
    if getattr(config, "is_encoder_decoder", False):
        return False
    name = type(model).__name__
    return name.endswith(("ForCausalLM", "LMHeadModel")) or bool(getattr(config, "is_decoder", False))


def _max_positions(config) -> int:
    for attr in ("n_positions", "max_position_embeddings", "n_ctx", "max_sequence_length"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ValueError(f"{type(config).__name__}: cannot tell the model's maximum sequence length; pass pad_to=")


def _cache_length(cache) -> int:
    if hasattr(cache, "get_seq_length"):
        return int(cache.get_seq_length())
    return len(cache)
