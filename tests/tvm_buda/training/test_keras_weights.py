"""Training Keras models on the simulator (weights recovered from the TFLite import), compared with
the same training in TensorFlow."""

import queue

import numpy as np
import pytest

import pybuda
from tests.pybuda.training_helpers import max_relative_difference

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

STEPS = 20


def dense_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)])


def conv_model(batch_norm: bool = False):
    keras.utils.set_random_seed(0)
    layers = [keras.Input((8, 8, 3)), keras.layers.Conv2D(4, 3, activation="relu")]
    layers += [keras.layers.BatchNormalization()] if batch_norm else []
    return keras.Sequential(layers + [keras.layers.Flatten(), keras.layers.Dense(2)])


def regression_data(steps, x_shape, y_width, seed=1):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((int(np.prod(x_shape[1:])), y_width)).astype(np.float32)
    xs = [rng.standard_normal(x_shape).astype(np.float32) for _ in range(steps)]
    return xs, [np.tanh(x.reshape(len(x), -1) @ w).astype(np.float32) for x in xs]


def train_on_device(model, xs, ys, optimizer, arch=None, loss_on_cpu=False):
    """The Keras model on tt0 with pybuda's MSE loss on tt0 (or torch's on cpu0); returns the losses."""
    tt0 = pybuda.TTDevice("tt0", module=pybuda.TFModule("keras_model", model), optimizer=optimizer, arch=arch)
    last = tt0
    if loss_on_cpu:
        import torch

        last = pybuda.CPUDevice("cpu0")
        last.place_loss_module(pybuda.PyTorchModule("mse", torch.nn.MSELoss()))
    else:
        tt0.place_loss_module(pybuda.op.loss.MSELoss("mse"))
    for x, y in zip(xs, ys):
        tt0.push_to_inputs(x)
        last.push_to_target_inputs(y)
    loss_q = queue.Queue()
    pybuda.run_training(steps=len(xs), loss_queue=loss_q)
    return [float(loss_q.get()[0].value()) for _ in range(len(xs))]


def train_in_tensorflow(model, xs, ys, optimizer):
    losses = []
    for x, y in zip(xs, ys):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    return losses


def weight_pccs(model, reference):
    out = {}
    for variable, ref in zip(model.trainable_variables, reference.trainable_variables):
        a, b = variable.numpy().ravel(), ref.numpy().ravel()
        out[variable.path] = 1.0 if np.allclose(a, b) else float(np.corrcoef(a, b)[0, 1])
    return out


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_keras_mlp_trains_like_tensorflow(name):
    model, reference = dense_model(), dense_model()
    initial = [v.numpy() for v in model.trainable_variables]
    xs, ys = regression_data(STEPS, (8, 16), 4)
    if name == "sgd":
        optimizer, keras_optimizer = pybuda.optimizers.SGD(learning_rate=0.1), keras.optimizers.SGD(0.1)
    else:
        optimizer = pybuda.optimizers.Adam(learning_rate=0.01)
        keras_optimizer = keras.optimizers.Adam(0.01, epsilon=1e-8)
    losses = train_on_device(model, xs, ys, optimizer)
    expected = train_in_tensorflow(reference, xs, ys, keras_optimizer)
    assert max_relative_difference(losses, expected) <= 0.05, (losses, expected)
    assert expected[-1] < expected[0]
    pccs = weight_pccs(model, reference)   # the Keras model holds the trained weights
    assert min(pccs.values()) >= 0.99, pccs
    assert not np.allclose(model.trainable_variables[0].numpy(), initial[0])
    assert not np.allclose(model.trainable_variables[1].numpy(), initial[1])   # a zero bias trains too


def test_keras_mlp_at_float32_hifi4_is_tight():
    pybuda.set_configuration_options(default_df_override=pybuda.DataFormat.Float32,
                                     accumulate_df=pybuda.DataFormat.Float32, math_fidelity=pybuda.MathFidelity.HiFi4)
    model, reference = dense_model(), dense_model()
    xs, ys = regression_data(STEPS, (8, 16), 4)
    losses = train_on_device(model, xs, ys, pybuda.optimizers.SGD(learning_rate=0.1),
                             arch=pybuda.BackendDevice.Wormhole_B0)   # Float32 accumulation needs Wormhole
    expected = train_in_tensorflow(reference, xs, ys, keras.optimizers.SGD(0.1))
    assert max_relative_difference(losses, expected) <= 0.005, (losses, expected)
    assert min(weight_pccs(model, reference).values()) >= 0.9999


def test_keras_conv_trains_like_tensorflow():
    """NHWC convolutions (TFLite's layout) get NCHW transposes for TVM's conv2d gradient."""
    model, reference = conv_model(), conv_model()
    xs, ys = regression_data(10, (4, 8, 8, 3), 2)
    losses = train_on_device(model, xs, ys, pybuda.optimizers.SGD(learning_rate=0.05), loss_on_cpu=True)
    expected = train_in_tensorflow(reference, xs, ys, keras.optimizers.SGD(0.05))
    assert max_relative_difference(losses, expected) <= 0.05, (losses, expected)
    for variable, ref in zip(model.trainable_variables, reference.trainable_variables):  # PyBuda's rule
        golden = ref.numpy()
        close = np.allclose(variable.numpy(), golden, atol=0.1 * np.abs(golden).max())
        assert close or weight_pccs(model, reference)[variable.path] >= 0.99, variable.path


def test_folded_variables_are_a_clear_error():
    model = conv_model(batch_norm=True)
    xs, ys = regression_data(1, (4, 8, 8, 3), 2)
    with pytest.raises(NotImplementedError, match="batch_normalization.*folded by the TFLite converter"):
        train_on_device(model, xs, ys, pybuda.optimizers.SGD(learning_rate=0.05))
