"""GPT-Neo sequence classification, PyBuda demo style (local and global attention layers), the
config's default use_cache=True (no cache comes back from an inference import)."""

import pybuda
import torch
from transformers import GPTNeoConfig, GPTNeoForSequenceClassification


def run_gptneo_sequence_classification():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.enable_auto_fusing = False
    compiler_cfg.balancer_policy = "Ribbon"

    torch.manual_seed(0)
    config = GPTNeoConfig(vocab_size=128, max_position_embeddings=64, hidden_size=64, num_layers=2, num_heads=2,
                          attention_types=[[["global", "local"], 1]], window_size=16, intermediate_size=128,
                          num_labels=2, pad_token_id=0)
    model = GPTNeoForSequenceClassification(config).eval()

    input_ids = torch.randint(1, 128, (1, 32))
    tokens = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_gptneo_sequence_classification", model),
                                    inputs=[tokens])
    output = output_q.get()
    print("Predicted class:", output[0].value().argmax(-1).item())
    with torch.no_grad():
        return output, model(**tokens)


if __name__ == "__main__":
    run_gptneo_sequence_classification()
