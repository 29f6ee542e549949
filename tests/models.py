"""Small PyTorch models used across tests (random weights, nothing downloaded)."""

import torch


class MLP(torch.nn.Module):
    def __init__(self, d_in=64, d_hidden=128, d_out=32):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, d_hidden)
        self.fc2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class EmbeddingCumsum(torch.nn.Module):
    """Token embedding (host), two linears (device), cumulative sum (host)."""

    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.head = torch.nn.Linear(dim, 16)

    def forward(self, ids):
        x = torch.nn.functional.gelu(self.proj(self.embed(ids)))
        return torch.cumsum(self.head(x), dim=1)


def bert_encoder(layers=2, seed=0):
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    return BertModel(BertConfig(num_hidden_layers=layers)).eval().encoder


def golden(model, *inputs):
    with torch.no_grad():
        out = model(*inputs)
    if hasattr(out, "last_hidden_state"):
        return out.last_hidden_state
    return out[0] if isinstance(out, (tuple, list)) else out
