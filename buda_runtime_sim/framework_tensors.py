"""Conversions between host arrays and the tensor types of each framework (imported lazily)."""

import numpy as np

FRAMEWORKS = ("pytorch", "tensorflow", "jax", "numpy")


def to_framework(array: np.ndarray, framework: str):
    framework = framework.lower()
    if framework in ("pytorch", "torch"):
        import torch

        return torch.from_numpy(np.array(array))
    if framework in ("tensorflow", "tf"):
        import tensorflow as tf

        return tf.convert_to_tensor(array)
    if framework == "jax":
        import jax.numpy as jnp

        return jnp.asarray(array)
    if framework == "numpy":
        return np.array(array)
    raise ValueError(f"unknown framework {framework!r}; expected one of {', '.join(FRAMEWORKS)}")
