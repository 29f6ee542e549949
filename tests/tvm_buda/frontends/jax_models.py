"""JAX models as plain functions closing over their parameters (random weights, NHWC images)."""

import numpy as np


def _params(*shapes, seed=0):
    import jax.numpy as jnp

    rng = np.random.default_rng(seed)
    return [jnp.asarray(rng.standard_normal(s).astype(np.float32) / np.sqrt(s[0])) for s in shapes]


def mlp():
    import jax

    w1, b1, w2, b2 = _params((16, 32), (32,), (32, 8), (8,))
    return lambda x: jax.nn.relu(x @ w1 + b1) @ w2 + b2


def cnn():
    """conv, relu, max-pool, flatten, linear."""
    import jax
    from jax import lax

    kernel, bias, w, b = _params((3, 3, 3, 4), (4,), (4 * 4 * 4, 10), (10,))

    def forward(image):
        h = lax.conv_general_dilated(image, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.relu(h + bias)
        h = lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return h.reshape(h.shape[0], -1) @ w + b

    return forward


def transformer_block(dim=32, heads=2):
    """layernorm, self-attention with softmax, and an MLP using exact and tanh GELU."""
    import jax
    import jax.numpy as jnp

    wqkv, wo, w1, w2 = _params((dim, 3 * dim), (dim, dim), (dim, 64), (64, dim))

    def layer_norm(x):
        mean = x.mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

    def forward(tokens):
        b, s, d = tokens.shape
        q, k, v = (layer_norm(tokens) @ wqkv).reshape(b, s, 3, heads, d // heads).transpose(2, 0, 3, 1, 4)
        attn = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // heads), axis=-1)
        h = tokens + (attn @ v).transpose(0, 2, 1, 3).reshape(b, s, d) @ wo
        m = jax.nn.gelu(layer_norm(h) @ w1, approximate=False)
        return h + jax.nn.gelu(m @ w2, approximate=True)

    return forward


def embedding_cumsum(vocab=100, dim=32):
    import jax
    import jax.numpy as jnp

    table, w1, w2 = _params((vocab, dim), (dim, dim), (dim, 16))
    return lambda ids: jnp.cumsum(jax.nn.gelu(jnp.take(table, ids, axis=0) @ w1) @ w2, axis=1)


def heads():
    """Two inputs; outputs as a dict (keys not in sorted order) and as a tuple."""
    import jax

    (w,) = _params((16, 8))

    def as_dict(x, bias):
        h = x @ w + bias
        return {"logits": h, "probs": jax.nn.softmax(h), "activations": jax.nn.relu(h)}

    def as_tuple(x, bias):
        out = as_dict(x, bias)
        return out["logits"], out["probs"]

    return as_dict, as_tuple


def sample(kind: str, batch: int = 2, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "emb_cumsum":
        return rng.integers(0, 100, (batch, 7)).astype(np.int32)
    shapes = {"mlp": (batch, 16), "cnn": (batch, 8, 8, 3), "block": (batch, 8, 32)}
    return rng.standard_normal(shapes[kind]).astype(np.float32)


BUILDERS = {"mlp": mlp, "cnn": cnn, "block": transformer_block, "emb_cumsum": embedding_cumsum}
