"""ViLT visual question answering, PyBuda demo style: the embeddings run on the host, the encoder,
pooler and answer classifier on the device, fed the embeddings and a float 0/1 attention mask that
the device wrapper turns into (1 - mask) * finfo(float32).min, as PyBuda's ViLT demo does.

Random weights (ViltConfig: 2 layers, hidden 32) and precomputed text and image embeddings stand in
for the checkpoint, the processor and the picture.
"""

import os

import pybuda
import torch
from transformers import ViltConfig, ViltForQuestionAnswering


class ViltEmbeddings(torch.nn.Module):
    """The host part: text and image embeddings (with modality types) and the joint mask."""

    def __init__(self, model):
        super().__init__()
        self.vilt = model.vilt

    def forward(self, inputs_embeds, image_embeds, attention_mask, pixel_mask):
        return self.vilt.embeddings(input_ids=None, attention_mask=attention_mask, token_type_ids=None,
                                    pixel_values=None, pixel_mask=pixel_mask, inputs_embeds=inputs_embeds,
                                    image_embeds=image_embeds)


class ViltQuestionAnsweringHead(torch.nn.Module):
    """The device part: encoder, final layer norm, pooler and classifier, with the additive mask
    built from a float 0/1 mask (the large negative fill is float32's lowest value)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, embedding_output, attention_mask):
        vilt = self.model.vilt
        additive = (1.0 - attention_mask[:, None, None, :]) * torch.finfo(torch.float32).min
        hidden = vilt.encoder(embedding_output, attention_mask=additive, return_dict=False)[0]
        hidden = vilt.layernorm(hidden)
        return self.model.classifier(vilt.pooler(hidden))


def run_vilt_question_answering():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.balancer_policy = "Ribbon"
    os.environ["PYBUDA_RIBBON2"] = "1"

    torch.manual_seed(0)
    config = ViltConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, num_labels=10)
    model = ViltForQuestionAnswering(config).eval()

    text = torch.randn(1, 8, 32)                                   # a question of 6 tokens, padded to 8
    image = torch.randn(1, 5, 32)                                  # 4 patches + the image's class token
    text_mask = torch.tensor([[1.0, 1, 1, 1, 1, 1, 0, 0]])
    with torch.no_grad():
        embedding_output, attention_mask = ViltEmbeddings(model)(text, image, text_mask, torch.ones(1, 5))
    attention_mask = attention_mask.to(torch.float32)

    head = ViltQuestionAnsweringHead(model).eval()
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_vilt_question_answering", head),
                                    inputs=[(embedding_output, attention_mask)])
    output = output_q.get()
    print("Predicted answer id:", output[0].value().argmax(-1).item())
    with torch.no_grad():
        return output, head(embedding_output, attention_mask)


if __name__ == "__main__":
    run_vilt_question_answering()
