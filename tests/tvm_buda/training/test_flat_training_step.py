"""A training step's weight update through one flat buffer (flat_values): the optimizer's flat step
and the device copies rounded once (weight_copies) give the bits the per-parameter route gives,
and each prefilled copy is what Tensor.from_array makes."""

import numpy as np
import torch

import pybuda
from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.module import Parameter
from buda_runtime_sim.runtime import training
from buda_runtime_sim.runtime.flat_values import FlatLayout, FlatValues, owner_of
from buda_runtime_sim.tensor import Tensor
from tests.pybuda.training_helpers import mlp, regression_data, train_on_device
from tvm_buda.training.weight_copies import prefilled_copies


def _same_tensor(a: Tensor, b: Tensor) -> None:
    assert a.shape == b.shape and a.data_format == b.data_format and a.dtype == b.dtype
    assert a.padded.shape == b.padded.shape and not a.padded.flags.writeable
    np.testing.assert_array_equal(a.padded.view(np.uint32), b.padded.view(np.uint32))


def test_prefilled_copies_are_from_arrays_tensors():
    shapes = {"w": (64, 64), "b": (64,), "odd": (5, 40), "s": (), "skip": (3,), "batch": (2, 32, 64)}
    rng = np.random.default_rng(0)
    values = {n: rng.standard_normal(s).astype(np.float32) * 100 for n, s in shapes.items()}
    values["odd"].reshape(-1)[:5] = [np.nan, np.inf, 1e-40, 70000.0, -0.0]   # NaN, inf, subnormal, fp16 overflow
    layout = FlatLayout(list(shapes), list(shapes.values()))
    owner = FlatValues(layout, layout.gather(values))
    views = dict(owner.views)
    bfp = DataFormat.Bfp8_b
    previous = {"w": {DataFormat.Float16_b: None, DataFormat.Float16: None, (DataFormat.Float16_b, "layout"): None},
                "b": {DataFormat.Float16_b: None, bfp: None, DataFormat.Float32: None},
                "odd": {DataFormat.Lf8: None, DataFormat.Float16_b: None}, "s": {DataFormat.Float16_b: None},
                "batch": {DataFormat.Float16_b: None}}
    shared = prefilled_copies(owner, views, previous)
    assert set(shared) == {id(views[n]) for n in previous}      # "skip" was never asked for
    for name, asked in previous.items():
        copies, array = shared[id(views[name])]
        assert array is views[name]
        per_value = {k for k in asked if k in (DataFormat.Float16_b, DataFormat.Float16, DataFormat.Lf8)}
        assert set(copies) == per_value                    # block formats, Float32, laid-out keys: left to modules
        for fmt in per_value:
            _same_tensor(copies[fmt], Tensor.from_array(values[name], fmt))


def _weights_after_training(flat: bool, monkeypatch):
    if not flat:
        monkeypatch.setattr(pybuda.optimizers.SGD, "elementwise", False)
        monkeypatch.setattr("tvm_buda.training.trainable.owner_of", lambda values: None)
    converted = []   # optimizer steps done when a module converted a weight itself
    device_tensor = Parameter.device_tensor

    def recording(self, data_format, layout=None, keep=True):
        if (data_format if layout is None else (data_format, layout)) not in self._device_copies:
            converted.append(training._session.optimizer_steps)
        return device_tensor(self, data_format, layout, keep)

    monkeypatch.setattr(Parameter, "device_tensor", recording)
    xs, ys = regression_data(steps=4)
    try:
        losses, _ = train_on_device(mlp(), xs, ys, pybuda.optimizers.SGD(learning_rate=0.1, momentum=0.5))
        model = training._session.devices[0].trainers[0].model
        params = {n: v.copy() for n, v in model.parameters().items()}
        modules = [sub.module for m in (model.forward_model, model.backward_model) for sub, _ in m.subgraphs]
        copies = {}
        for module in modules:
            for p in module.get_parameters():
                copies[p.get_name()] = (p.device_tensor(DataFormat.Float16_b), p.value())
        on_flat = owner_of(model.parameters()) is not None
        return losses, params, copies, on_flat, converted
    finally:
        pybuda.shutdown()
        torch.set_grad_enabled(True)


def test_training_through_the_flat_buffer_keeps_every_bit(monkeypatch):
    with monkeypatch.context() as patch:
        flat_losses, flat_params, flat_copies, on_flat, converted = _weights_after_training(True, patch)
    assert on_flat                                       # the flat route was taken
    # from the second update on (the first tells which formats the programs ask for) the copies are ready
    assert converted and max(converted) < 2
    with monkeypatch.context() as patch:
        loop_losses, loop_params, _, on_flat, converted = _weights_after_training(False, patch)
    assert not on_flat and max(converted) >= 2
    assert flat_losses == loop_losses
    for name in loop_params:
        np.testing.assert_array_equal(flat_params[name].view(np.uint32), loop_params[name].view(np.uint32))
    for tensor, value in flat_copies.values():          # the prefilled device copies: a fresh conversion's bits
        _same_tensor(tensor, Tensor.from_array(value, DataFormat.Float16_b))
