"""GPT-2 text generation through PyBuda's transformers pipeline wrapper, PyBuda demo style.

Random weights (GPT2Config, 1 layer) and a local word-level tokenizer stand in for the pretrained
checkpoint; beam search runs on the host, every forward on the simulated device.
"""

import copy

import pybuda
import torch
from pybuda.transformers.pipeline import pipeline as pybuda_pipeline
from transformers import GPT2Config, GPT2LMHeadModel

from tests.clients.local_tokenizers import gpt2_style_tokenizer


def run_gpt2_text_generation():
    tokenizer = gpt2_style_tokenizer()
    config_dict = GPT2Config(vocab_size=len(tokenizer), n_positions=32, n_embd=64, n_layer=1, n_head=2).to_dict()
    config_dict["use_cache"] = False
    config_dict.update(bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    config = GPT2Config(**config_dict)

    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda.DataFormat.Float16_b

    torch.manual_seed(0)
    model = GPT2LMHeadModel(config).eval()
    framework_model = copy.deepcopy(model)  # the golden: the same weights run by PyTorch
    tokenizer.pad_token, tokenizer.pad_token_id = tokenizer.eos_token, tokenizer.eos_token_id

    prefix_text = "my name is thomas and my main"
    text_generator = pybuda_pipeline("text-generation", model=model, tokenizer=tokenizer)
    answer = text_generator(prefix_text, max_length=12, num_beams=2, num_return_sequences=2,
                            pad_token_id=tokenizer.pad_token_id, no_repeat_ngram_size=2)
    compiled_for_generation = len(model.forward.fallback.compiled)   # use_cache=False: the full-sequence path
    print(f"Prefix text: {prefix_text}")
    for sequence in answer:
        print(sequence.values())

    # one forward of the device model beside the framework's (two rows, like the two beams: the
    # shape generation compiled for), for the comparison
    input_ids = tokenizer(prefix_text, return_tensors="pt")["input_ids"].repeat(2, 1)
    with torch.no_grad():
        device_logits = model(input_ids).logits
        golden_logits = framework_model(input_ids, use_cache=False).logits
    return answer, [device_logits], [golden_logits], compiled_for_generation


if __name__ == "__main__":
    run_gpt2_text_generation()
