"""BEiT image classification, PyBuda demo style: relative position bias in each layer (the
pretrained checkpoints' setting), layer scale, mean pooling.

The bias table is gathered by a relative position index BEiT builds from aranges and a scalar
broadcast; that index is a compile-time constant (relay_passes/fill_constants.py). The table's
resize (an interpolation of the weights) stays on the host."""

import pybuda
import torch
from transformers import BeitConfig, BeitForImageClassification


def run_beit_image_classification():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.balancer_policy = "Ribbon"
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    pybuda.config.set_configuration_options(enable_t_streaming=True)

    torch.manual_seed(0)
    config = BeitConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=128, num_labels=10, use_relative_position_bias=True,
                        use_absolute_position_embeddings=False, use_mean_pooling=True)
    model = BeitForImageClassification(config).eval()

    pixel_values = torch.rand(1, 3, 32, 32)
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_beit_image_classification", model),
                                    inputs=[(pixel_values,)])
    output = output_q.get()
    with torch.no_grad():
        return output, model(pixel_values)


if __name__ == "__main__":
    run_beit_image_classification()
