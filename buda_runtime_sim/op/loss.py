"""`pybuda.op.loss`: loss modules for `place_loss_module` on a TTDevice.

Each is a PyBudaModule whose forward(prediction, target) returns the scalar loss and whose
backward(prediction, target, grad) returns the gradient for the prediction, both computed with
simulator ops in the device's formats. Reductions: "mean" (default) or "sum", as in torch.nn.
Class targets (CrossEntropyLoss, NLLLoss) may be class indices (N,) or one-hot/probabilities
(N, C); indices become one-hot on the host, as data preparation.
"""

from __future__ import annotations

import numpy as np

from ..module import PyBudaModule
from ..tensor import Tensor
from .general import Multiply, ReduceSum, Subtract
from .math import Abs, Greater, Less
from .nn import LogSoftmax, Softmax
from .transformations import Reshape

__all__ = ["CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss"]


class _Loss(PyBudaModule):
    elementwise = True  # the target has the prediction's shape

    def __init__(self, name: str = "loss", reduction: str = "mean"):
        super().__init__(name)
        if reduction not in ("mean", "sum"):
            raise ValueError(f"{type(self).__name__}: reduction must be 'mean' or 'sum', got {reduction!r}")
        self.reduction = reduction

    def _check(self, prediction, target) -> None:
        if self.elementwise and tuple(prediction.shape) != tuple(target.shape):
            raise ValueError(f"{type(self).__name__} {self.name!r}: target has shape {tuple(target.shape)}, the "
                             f"prediction {tuple(prediction.shape)}; push targets shaped like the output")

    def _count(self, prediction) -> int:
        return int(np.prod(prediction.shape)) if self.elementwise else int(np.prod(prediction.shape[:-1]))

    def _reduce(self, x):
        """Sum (or mean) over every element: one reduction over the flattened tensor."""
        n = int(np.prod(x.shape))
        total = Reshape(f"{self.name}_total", ReduceSum(f"{self.name}_sum", Reshape(f"{self.name}_flat", x, (1, n)),
                                                         -1), ())
        if self.reduction == "mean":
            total = Multiply(f"{self.name}_mean", total, _scalar(1.0 / self._count(x)))
        return total

    def _scale(self, prediction, grad) -> np.ndarray:
        """d loss / d element for the reduction, times the incoming gradient (a scalar)."""
        g = float(np.asarray(grad.numpy() if isinstance(grad, Tensor) else grad).reshape(()))
        return _scalar(g / self._count(prediction) if self.reduction == "mean" else g)


class L1Loss(_Loss):
    """mean(|prediction - target|)."""

    def forward(self, prediction, target):
        self._check(prediction, target)
        return self._reduce(Abs(f"{self.name}_abs", Subtract(f"{self.name}_diff", prediction, target)))

    def backward(self, prediction, target, grad):
        diff = Subtract(f"{self.name}_bw_diff", prediction, target)
        sign = Subtract(f"{self.name}_bw_sign", Greater(f"{self.name}_bw_pos", diff, _scalar(0.0)),
                        Less(f"{self.name}_bw_neg", diff, _scalar(0.0)))
        return Multiply(f"{self.name}_bw", sign, self._scale(prediction, grad)), None


class MSELoss(_Loss):
    """mean((prediction - target) ** 2)."""

    def forward(self, prediction, target):
        self._check(prediction, target)
        diff = Subtract(f"{self.name}_diff", prediction, target)
        return self._reduce(Multiply(f"{self.name}_square", diff, diff))

    def backward(self, prediction, target, grad):
        diff = Subtract(f"{self.name}_bw_diff", prediction, target)
        return Multiply(f"{self.name}_bw", diff, 2.0 * self._scale(prediction, grad)), None


class _ClassLoss(_Loss):
    elementwise = False

    def _one_hot(self, prediction, target) -> Tensor:
        classes = prediction.shape[-1]
        if tuple(target.shape) == tuple(prediction.shape):
            return target
        if tuple(target.shape) != tuple(prediction.shape[:-1]):
            raise ValueError(f"{type(self).__name__} {self.name!r}: target has shape {tuple(target.shape)}; expected "
                             f"class indices {tuple(prediction.shape[:-1])} or probabilities {tuple(prediction.shape)}")
        indices = np.asarray(target.numpy()).astype(np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= classes):
            raise ValueError(f"{type(self).__name__} {self.name!r}: class indices must be in [0, {classes}), got "
                             f"[{indices.min()}, {indices.max()}]")
        return Tensor.from_array(np.eye(classes, dtype=np.float32)[indices])

    def _negative_picked(self, log_probs, target):
        picked = Multiply(f"{self.name}_pick", log_probs, self._one_hot(log_probs, target))
        return Multiply(f"{self.name}_neg", self._reduce(picked), _scalar(-1.0))


class CrossEntropyLoss(_ClassLoss):
    """mean over rows of -sum(target * log_softmax(prediction)) (logits in, like torch.nn.CrossEntropyLoss)."""

    def forward(self, prediction, target):
        return self._negative_picked(LogSoftmax(f"{self.name}_log_softmax", prediction, dim=-1), target)

    def backward(self, prediction, target, grad):
        probs = Softmax(f"{self.name}_bw_softmax", prediction, dim=-1)
        diff = Subtract(f"{self.name}_bw_diff", probs, self._one_hot(prediction, target))
        return Multiply(f"{self.name}_bw", diff, self._scale(prediction, grad)), None


class NLLLoss(_ClassLoss):
    """mean over rows of -prediction[target] (log-probabilities in, like torch.nn.NLLLoss)."""

    def forward(self, prediction, target):
        return self._negative_picked(prediction, target)

    def backward(self, prediction, target, grad):
        one_hot = self._one_hot(prediction, target)
        return Multiply(f"{self.name}_bw", one_hot, -1.0 * self._scale(prediction, grad)), None


def _scalar(value: float) -> np.ndarray:
    return np.asarray(value, dtype=np.float32)
