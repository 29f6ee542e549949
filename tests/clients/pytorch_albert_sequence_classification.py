"""ALBERT sequence classification, PyBuda demo style, with AMP level 2 and an a-format default."""

import pybuda
import torch
from pybuda._C.backend_api import BackendDevice
from transformers import AlbertConfig, AlbertForSequenceClassification


def run_albert_sequence_classification():
    available_devices = pybuda.detect_available_devices()
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16
    compiler_cfg.amp_level = 2
    if available_devices[0] == BackendDevice.Grayskull:
        compiler_cfg.enable_auto_fusing = False

    torch.manual_seed(0)
    config = AlbertConfig(vocab_size=100, embedding_size=32, hidden_size=64, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=128, max_position_embeddings=40, num_labels=3)
    model = AlbertForSequenceClassification(config).eval()

    input_ids = torch.randint(0, 100, (2, 16))
    tokens = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids),
              "token_type_ids": torch.zeros_like(input_ids)}
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_albert_sequence_classification", model),
                                    inputs=[tokens])
    output = output_q.get()
    print("Predicted classes:", output[0].value().argmax(-1).tolist())
    with torch.no_grad():
        return output, model(**tokens)


if __name__ == "__main__":
    run_albert_sequence_classification()
