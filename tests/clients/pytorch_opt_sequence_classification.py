"""OPT sequence classification, PyBuda demo style, with the config's default use_cache=True: the
import traces without the key/value cache (torch.export cannot return transformers' DynamicCache)."""

import pybuda
import torch
from transformers import OPTConfig, OPTForSequenceClassification


def run_opt_sequence_classification():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda.DataFormat.Float16_b
    compiler_cfg.enable_auto_fusing = False

    torch.manual_seed(0)
    config = OPTConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, ffn_dim=128, num_attention_heads=2,
                       max_position_embeddings=64, word_embed_proj_dim=64, num_labels=3, pad_token_id=1)
    assert config.use_cache
    model = OPTForSequenceClassification(config).eval()

    input_ids = torch.randint(3, 128, (1, 32))
    tokens = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_opt_sequence_classification", model), inputs=[tokens])
    output = output_q.get()
    print("Predicted class:", output[0].value().argmax(-1).item())
    assert model.config.use_cache          # the user's config is left as it was
    with torch.no_grad():
        return output, model(**tokens)


if __name__ == "__main__":
    run_opt_sequence_classification()
