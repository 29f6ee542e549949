"""The training half of a device's API: loss module, targets, gradients (mixed into Device)."""

from __future__ import annotations

import collections

from ..module import Module
from ..tensor import _to_numpy


class TrainingDevice:
    loss_module = None

    def place_loss_module(self, module) -> None:
        """Place the module computing the loss; it takes this device's outputs, then the targets."""
        self._check_active("place_loss_module")
        if not isinstance(module, Module):
            raise TypeError(f"{self.name}: place_loss_module expects a PyBuda module (a pybuda.op.loss module or "
                            f"PyTorchModule('loss', torch.nn.L1Loss())), got {type(module).__name__}")
        module.device = self
        self.loss_module = module

    def remove_loss_module(self) -> None:
        if self.loss_module is not None:
            self.loss_module.device = None
        self.loss_module = None

    def push_to_target_inputs(self, *tensors) -> None:
        """Queue the training targets for one input, in order (they follow the outputs into the loss)."""
        self._check_active("push_to_target_inputs")
        if self.loss_module is None:
            raise RuntimeError(f"{self.name}: push_to_target_inputs on a device without a loss module; call "
                               "place_loss_module on the last device of the pipeline first")
        if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
            tensors = tuple(tensors[0])
        if not tensors:
            raise ValueError(f"{self.name}: push_to_target_inputs needs at least one target tensor")
        specs = []
        for i, t in enumerate(tensors):
            if not (hasattr(t, "shape") and hasattr(t, "dtype")):
                raise TypeError(f"{self.name}: target #{i} is a {type(t).__name__}, not a tensor")
            array = _to_numpy(t)
            specs.append((tuple(array.shape), str(array.dtype)))
        first = self.__dict__.setdefault("_target_signature", specs)
        if specs != first:
            raise ValueError(f"{self.name}: targets of shape/dtype {specs} differ from the first targets pushed, "
                             f"{first}; every step needs targets of the same shapes")
        self.__dict__.setdefault("target_input_queue", collections.deque()).append(tuple(tensors))

    def get_parameter_gradients(self) -> dict:
        """Currently accumulated gradients of this device's parameters, by name."""
        from .training import device_gradients

        return device_gradients(self)

    def get_parameter_checkpoint(self) -> dict:
        """Current values of this device's parameters, by name."""
        from .parameters import get_parameter_checkpoint

        return get_parameter_checkpoint(self)
