"""T5 encoder, PyBuda demo style (the encoder half of a T5 generation demo)."""

import pybuda
import torch
from transformers import T5Config, T5EncoderModel


def run_t5_encoder():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.enable_tvm_cpu_fallback = True
    compiler_cfg.enable_link_past_cache_ios = False
    compiler_cfg.convert_framework_params_to_tvm = False

    torch.manual_seed(0)
    config = T5Config(vocab_size=128, d_model=64, d_kv=32, d_ff=128, num_layers=1, num_heads=2,
                      relative_attention_num_buckets=8, use_cache=False)
    model = T5EncoderModel(config).eval()

    input_ids = torch.randint(0, 128, (1, 32))
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_t5_encoder", model),
                                    inputs=[{"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}])
    output = output_q.get()
    with torch.no_grad():
        return output, model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))


if __name__ == "__main__":
    run_t5_encoder()
