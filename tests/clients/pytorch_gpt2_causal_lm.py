"""GPT-2 causal language model, PyBuda demo style (GPT2Config rebuilt from a dict with use_cache off;
the demos also turn return_dict off, which transformers 5's GPT-2 no longer supports)."""

import pybuda
import torch
from transformers import GPT2Config, GPT2LMHeadModel


def run_gpt2_causal_lm():
    config_dict = GPT2Config(vocab_size=128, n_positions=64, n_embd=64, n_layer=1, n_head=2).to_dict()
    config_dict["use_cache"] = False
    config = GPT2Config(**config_dict)

    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda.DataFormat.Float16_b
    compiler_cfg.retain_tvm_python_files = True

    torch.manual_seed(0)
    model = GPT2LMHeadModel(config).eval()
    input_ids = torch.randint(0, 128, (1, 32))
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_gpt2_causal_lm", model), inputs=[(input_ids,)])
    output = output_q.get()
    print("Next token:", output[0].value()[0, -1].argmax().item())
    with torch.no_grad():
        return output, model(input_ids)


if __name__ == "__main__":
    run_gpt2_causal_lm()
