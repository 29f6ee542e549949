"""ViT image classification, PyBuda demo style (synthetic image, random weights)."""

import pybuda
import torch
from transformers import ViTConfig, ViTForImageClassification


def run_vit_image_classification():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.balancer_policy = "Ribbon"
    compiler_cfg.enable_auto_transposing_placement = True
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b

    torch.manual_seed(0)
    config = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=64, num_hidden_layers=1,
                       num_attention_heads=2, intermediate_size=128, num_labels=10)
    model = ViTForImageClassification(config).eval()

    pixel_values = torch.rand(1, 3, 32, 32)
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_vit_image_classification", model),
                                    inputs=[(pixel_values,)])
    output = output_q.get()[0].value()
    print("Predicted class:", output.argmax(-1).item())
    with torch.no_grad():
        return [output], model(pixel_values)


if __name__ == "__main__":
    run_vit_image_classification()
