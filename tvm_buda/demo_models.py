"""Small built-in PyTorch models for the demo and the tests (random weights, nothing downloaded)."""

from __future__ import annotations


def _torch():
    import torch

    return torch


def mlp(d_in: int = 64, d_hidden: int = 128, d_out: int = 32):
    torch = _torch()

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(d_in, d_hidden)
            self.fc2 = torch.nn.Linear(d_hidden, d_out)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    return MLP().eval()


def embedding_cumsum(vocab: int = 100, dim: int = 32):
    """Token embedding (host), two linears (device), cumulative sum (host)."""
    torch = _torch()

    class EmbeddingCumsum(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, dim)
            self.proj = torch.nn.Linear(dim, dim)
            self.head = torch.nn.Linear(dim, 16)

        def forward(self, ids):
            x = torch.nn.functional.gelu(self.proj(self.embed(ids)))
            return torch.cumsum(self.head(x), dim=1)

    return EmbeddingCumsum().eval()


def bert_encoder(layers: int = 2, seed: int = 0):
    """The encoder of a BERT-base-shaped model with `layers` layers, from a config."""
    torch = _torch()
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    return BertModel(BertConfig(num_hidden_layers=layers)).eval().encoder


def bert_encoder_hidden(layers: int = 2, seed: int = 0):
    """The BERT encoder as a module returning only its last hidden state (a plain tensor): what
    ONNX export and golden comparisons want."""
    torch = _torch()
    encoder = bert_encoder(layers, seed)

    class EncoderHidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder

        def forward(self, hidden):
            return self.encoder(hidden).last_hidden_state

    return EncoderHidden().eval()


def bert_classifier(vocab: int = 64, hidden: int = 32, intermediate: int = 64, positions: int = 16,
                    labels: int = 4, seed: int = 0):
    """A 2-layer BERT-style encoder with a classification head, input_ids -> logits, dropout off:
    the model training is checked and timed on."""
    torch = _torch()
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    config = BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=intermediate, max_position_embeddings=positions, num_labels=labels,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = BertForSequenceClassification(config)

        def forward(self, ids):
            return self.bert(input_ids=ids).logits

    return Classifier().eval()
