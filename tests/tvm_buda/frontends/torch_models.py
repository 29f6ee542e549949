"""PyTorch models for the frontend tests (and, exported, for the ONNX tests). NCHW images."""

import torch

from tests.models import MLP, EmbeddingCumsum

__all__ = ["CNN", "EmbeddingCumsum", "MLP", "TransformerBlock", "TwoHeads", "sample"]


class CNN(torch.nn.Module):
    """conv, relu, max-pool, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 4 * 4, 10)

    def forward(self, image):
        h = torch.nn.functional.max_pool2d(torch.relu(self.conv(image)), 2)
        return self.fc(torch.flatten(h, 1))


class TransformerBlock(torch.nn.Module):
    """layernorm, self-attention with softmax, and an MLP using exact and tanh GELU."""

    def __init__(self, dim=32, heads=2):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.fc1, self.fc2 = torch.nn.Linear(dim, 64), torch.nn.Linear(64, dim)

    def forward(self, tokens):
        b, s, d = tokens.shape
        q, k, v = self.qkv(self.ln1(tokens)).reshape(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = torch.softmax(q @ k.transpose(-1, -2) * self.scale, dim=-1)
        h = tokens + self.proj((attn @ v).transpose(1, 2).reshape(b, s, d))
        m = torch.nn.functional.gelu(self.fc1(self.ln2(h)))
        return h + torch.nn.functional.gelu(self.fc2(m), approximate="tanh")


class TwoHeads(torch.nn.Module):
    """Keyword inputs and several outputs (tuple or dict)."""

    def __init__(self, as_dict=False):
        super().__init__()
        self.as_dict = as_dict
        self.fc = torch.nn.Linear(16, 8)

    def forward(self, x, scale):
        h = self.fc(x) * scale
        if self.as_dict:
            return {"logits": h, "total": h.sum(-1)}
        return h, torch.relu(h)


def sample(kind: str, batch: int = 2, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    if kind == "emb_cumsum":
        return torch.randint(0, 100, (batch, 7), generator=generator)
    shapes = {"mlp": (batch, 64), "cnn": (batch, 3, 8, 8), "block": (batch, 8, 32)}
    return torch.randn(shapes[kind], generator=generator)


def build(kind: str) -> torch.nn.Module:
    torch.manual_seed(0)
    return {"mlp": MLP, "cnn": CNN, "block": TransformerBlock, "emb_cumsum": EmbeddingCumsum}[kind]().eval()
