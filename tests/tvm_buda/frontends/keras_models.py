"""Small Keras models (NHWC, random weights) shared by the TensorFlow and TFLite tests."""

import numpy as np


def _keras():
    import keras

    keras.utils.set_random_seed(0)
    return keras


def mlp():
    keras = _keras()
    x = keras.Input((16,), name="x")
    h = keras.layers.Dense(32, activation="relu")(x)
    return keras.Model(x, keras.layers.Dense(8)(h), name="mlp")


def cnn():
    """conv, relu, max-pool, flatten, linear on NHWC images."""
    keras = _keras()
    x = keras.Input((8, 8, 3), name="image")
    h = keras.layers.Conv2D(4, 3, padding="same")(x)
    h = keras.layers.ReLU()(h)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Flatten()(h)
    return keras.Model(x, keras.layers.Dense(10)(h), name="cnn")


def transformer_block(seq=8, dim=32, heads=2):
    """layernorm, self-attention (softmax), and an MLP using exact and tanh GELU."""
    keras = _keras()
    x = keras.Input((seq, dim), name="tokens")
    h = keras.layers.LayerNormalization(epsilon=1e-5)(x)
    h = x + keras.layers.MultiHeadAttention(heads, dim // heads)(h, h)
    m = keras.layers.LayerNormalization(epsilon=1e-5)(h)
    m = keras.layers.Dense(64, activation=lambda t: keras.activations.gelu(t, approximate=False))(m)
    m = keras.layers.Dense(dim, activation=lambda t: keras.activations.gelu(t, approximate=True))(m)
    return keras.Model(x, h + m, name="block")


def embedding_cumsum(vocab=100, dim=32):
    keras = _keras()
    ids = keras.Input((7,), dtype="int32", name="ids")
    h = keras.layers.Embedding(vocab, dim)(ids)
    h = keras.layers.Dense(dim, activation="gelu")(h)
    h = keras.layers.Dense(16)(h)
    return keras.Model(ids, keras.ops.cumsum(h, axis=1), name="emb_cumsum")


def two_in_three_out():
    """Named inputs in a dict, named outputs in a dict (not in alphabetical order)."""
    keras = _keras()
    a = keras.Input((16,), name="zeta")
    b = keras.Input((8,), name="alpha")
    h = keras.layers.Dense(32, activation="relu")(a)
    g = keras.layers.Dense(32)(b)
    outputs = {"sum": h + g, "head": keras.layers.Dense(3)(g), "scaled": h * 2.0}
    return keras.Model({"zeta": a, "alpha": b}, outputs, name="two_in_three_out")


def sample(model_name: str, batch: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    shapes = {"mlp": (batch, 16), "cnn": (batch, 8, 8, 3), "block": (batch, 8, 32)}
    if model_name == "emb_cumsum":
        return rng.integers(0, 100, (batch, 7)).astype(np.int32)
    return rng.standard_normal(shapes[model_name]).astype(np.float32)


BUILDERS = {"mlp": mlp, "cnn": cnn, "block": transformer_block, "emb_cumsum": embedding_cumsum}
