"""RoBERTa masked language model, PyBuda demo style (random weights, synthetic token ids)."""

import pybuda
import torch
from transformers import RobertaConfig, RobertaForMaskedLM


def run_roberta_masked_lm():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.Float16_b
    compiler_cfg.balancer_policy = "Ribbon"
    compiler_cfg.enable_tvm_constant_prop = True

    torch.manual_seed(0)
    config = RobertaConfig(vocab_size=120, hidden_size=64, num_hidden_layers=1, num_attention_heads=4,
                           intermediate_size=128, max_position_embeddings=40)
    model = RobertaForMaskedLM(config).eval()

    input_ids = torch.randint(5, 120, (1, 24))
    input_ids[0, 0], input_ids[0, -1], input_ids[0, 7] = 0, 2, 3  # <s> ... </s>, one masked position
    tokens = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}

    tt0 = pybuda.TTDevice("tt0", module=pybuda.PyTorchModule("pt_roberta_masked_lm", model))
    tt0.push_to_inputs(tokens)
    output_q = pybuda.run_inference(_sequential=True)
    output = output_q.get()
    predicted = output[0].value()[0, 7].argmax(-1).item()
    print(f"Predicted token id at the mask: {predicted}")
    with torch.no_grad():
        return output, model(**tokens)


if __name__ == "__main__":
    run_roberta_masked_lm()
