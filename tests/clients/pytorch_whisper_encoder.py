"""Whisper encoder, PyBuda demo style: log-mel features in (synthetic), encoder states out."""

import pybuda
import torch
from transformers import WhisperConfig, WhisperModel


class WhisperEncoderWrapper(torch.nn.Module):
    """The demos put the encoder and decoder on the device separately; this is the encoder."""

    def __init__(self, model):
        super().__init__()
        self.encoder = model.get_encoder()

    def forward(self, input_features):
        return self.encoder(input_features, return_dict=False)[0]


def run_whisper_encoder():
    compiler_cfg = pybuda.config._get_global_compiler_config()
    compiler_cfg.default_df_override = pybuda._C.DataFormat.Float16_b
    compiler_cfg.enable_tvm_cpu_fallback = True  # conv1d stem and position lookup stay on the host
    compiler_cfg.amp_level = 1

    torch.manual_seed(0)
    config = WhisperConfig(vocab_size=128, num_mel_bins=16, encoder_layers=1, encoder_attention_heads=2,
                           decoder_layers=1, decoder_attention_heads=2, d_model=64, encoder_ffn_dim=128,
                           decoder_ffn_dim=128, max_source_positions=32, max_target_positions=32,
                           pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    model = WhisperEncoderWrapper(WhisperModel(config).eval()).eval()

    input_features = torch.randn(1, 16, 64)  # (batch, mel bins, 2 x max_source_positions frames)
    output_q = pybuda.run_inference(pybuda.PyTorchModule("pt_whisper_encoder", model), inputs=[(input_features,)])
    output = output_q.get()
    with torch.no_grad():
        return output, model(input_features)


if __name__ == "__main__":
    run_whisper_encoder()
