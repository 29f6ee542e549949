"""One module's part in training: forward keeping what backward needs, backward, its gradients.

- CompiledTrainer: a framework module on a TTDevice, compiled into forward and backward device
  graphs (the module's `compile_for_training`, provided by tvm_buda).
- TorchTrainer: a PyTorch module on a CPUDevice (a model part or a loss), run by torch autograd.
- BudaLossTrainer: a `pybuda.op.loss` module on a TTDevice; forward and backward are simulator ops.

Values crossing between trainers are host arrays or framework tensors; each trainer converts.
Parameter gradients accumulate across backward passes until `zero_grad`.
"""

from __future__ import annotations

import numpy as np

from .. import context
from ..module import PyBudaModule
from ..tensor import Tensor, _to_numpy


# Compiles a PyBudaModule's forward and backward (module, inputs, config, input_grad_count) ->
# TrainableModel; installed by the pybuda facade, since compiling needs TVM.
_pybuda_module_compiler = None


def set_pybuda_module_compiler(compiler) -> None:
    global _pybuda_module_compiler
    _pybuda_module_compiler = compiler


class Trainer:
    def __init__(self, device, module, is_loss: bool = False):
        self.device = device
        self.module = module
        self.is_loss = is_loss
        self.grads: dict[str, np.ndarray] = {}

    @property
    def trainable(self) -> list[str]:
        return []

    def prepare(self, inputs, input_grad_count: int) -> None:
        """Compile (or otherwise get ready) for these inputs; called once, before the first forward."""

    def zero_grad(self) -> None:
        self.grads = {}

    def gradients(self) -> dict[str, np.ndarray]:
        return dict(self.grads)

    def parameters(self) -> dict[str, np.ndarray]:
        return {}

    def apply(self, values: dict) -> None:
        """Take new parameter values (after an optimizer step or update_device_parameters)."""

    def _accumulate(self, grads: dict) -> None:
        for name, g in grads.items():
            g = np.asarray(g, dtype=np.float32)
            self.grads[name] = self.grads[name] + g if name in self.grads else g.copy()


class CompiledTrainer(Trainer):
    """A framework module on a TTDevice: forward and backward run as generated device modules."""

    def __init__(self, device, module, is_loss: bool = False):
        super().__init__(device, module, is_loss)
        self.model = None
        self.input_grad_count = 0

    @property
    def trainable(self) -> list[str]:
        return list(self.model.trainable) if self.model is not None else []

    def prepare(self, inputs, input_grad_count: int) -> None:
        self.input_grad_count = input_grad_count
        config = self.device.compile_config()
        if isinstance(self.module, PyBudaModule):
            if _pybuda_module_compiler is None:
                raise RuntimeError(f"{self.device.name}: training PyBudaModule {self.module.name} needs the compiler; "
                                   "import pybuda (or tvm_buda) first")
            self.model = _pybuda_module_compiler(self.module, _host(inputs), config, input_grad_count)
            return
        if not hasattr(self.module, "compile_for_training"):
            raise TypeError(f"{self.device.name}: module {self.module.name} cannot be trained on a TT device "
                            "(it has no framework graph to differentiate)")
        self.model = self.module.compile_for_training(_host(inputs), config, input_grad_count)

    def forward(self, inputs):
        outputs, saved = self.model.forward(*_host(inputs))
        return tuple(outputs), saved

    def backward(self, saved, output_grads):
        param_grads, input_grads = self.model.backward(saved, [_to_numpy(g) for g in output_grads])
        self._accumulate(param_grads)
        names = [s.name for s in self.model.inputs]
        return tuple(input_grads.get(n) for n in names)

    def parameters(self) -> dict[str, np.ndarray]:
        return self.model.parameters() if self.model is not None else {}

    def apply(self, values: dict) -> None:
        mine = {k: v for k, v in values.items() if k in self.model.params}
        if mine:
            self.model.update_parameters(mine)
            if self.model.write_back is not None:
                self.model.write_back(mine)


class TorchTrainer(Trainer):
    """A PyTorch module on a CPUDevice: torch autograd computes its backward."""

    def __init__(self, device, module, is_loss: bool = False):
        super().__init__(device, module, is_loss)
        self.torch_module = module.framework_module
        self.input_grad_count = 0

    @property
    def trainable(self) -> list[str]:
        return [n for n, p in self.torch_module.named_parameters() if p.requires_grad]

    def prepare(self, inputs, input_grad_count: int) -> None:
        self.input_grad_count = input_grad_count

    def forward(self, inputs):
        import torch

        args = []
        for i, x in enumerate(inputs):
            t = x if isinstance(x, torch.Tensor) else torch.from_numpy(np.array(_to_numpy(x)))
            t = t.detach()
            if i < self.input_grad_count and t.is_floating_point():
                t.requires_grad_(True)
            args.append(t)
        with torch.enable_grad():
            out = self.torch_module(*args)
        outputs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return tuple(o.detach() for o in outputs), (args, outputs)

    def backward(self, record, output_grads):
        import torch

        args, outputs = record
        pairs = [(o, torch.as_tensor(np.asarray(_to_numpy(g), dtype=np.float32)).to(o.dtype).reshape(o.shape))
                 for o, g in zip(outputs, output_grads) if g is not None and o.requires_grad]
        if pairs:
            torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return tuple(a.grad if isinstance(a, torch.Tensor) and a.requires_grad else None for a in args)

    def zero_grad(self) -> None:
        for p in self.torch_module.parameters():
            p.grad = None

    def gradients(self) -> dict[str, np.ndarray]:
        return {n: p.grad.detach().numpy().copy() for n, p in self.torch_module.named_parameters()
                if p.requires_grad and p.grad is not None}

    def parameters(self) -> dict[str, np.ndarray]:
        return {n: p.detach().numpy().copy() for n, p in self.torch_module.named_parameters()}

    def apply(self, values: dict) -> None:
        import torch

        params = dict(self.torch_module.named_parameters())
        with torch.no_grad():
            for name, value in values.items():
                if name in params:
                    params[name].copy_(torch.as_tensor(np.asarray(_to_numpy(value))))


class BudaLossTrainer(Trainer):
    """A `pybuda.op.loss` module on a TTDevice: its forward and backward are simulator ops."""

    def prepare(self, inputs, input_grad_count: int) -> None:
        if not hasattr(self.module, "backward"):
            raise TypeError(f"{self.device.name}: loss module {self.module.name} has no backward; use a "
                            "pybuda.op.loss module or a PyTorch loss (PyTorchModule)")

    def _run(self, fn, *args):
        config = self.device.compile_config()
        ctx = context.ExecutionContext(numerics=config.numerics())
        with context.use(ctx):
            return fn(*args)

    def forward(self, inputs):
        df = self.device.compile_config().numerics().input_df
        tensors = [x if isinstance(x, Tensor) else Tensor.from_array(_to_numpy(x).astype(np.float32, copy=False), df)
                   for x in inputs]
        out = self._run(self.module, *tensors)
        return (out.numpy(),), tensors

    def backward(self, tensors, output_grads):
        grads = self._run(self.module.backward, *tensors, output_grads[0])
        grads = grads if isinstance(grads, (tuple, list)) else (grads,)
        return tuple(g.numpy() if isinstance(g, Tensor) else g for g in grads)


def make_trainer(device, module, is_loss: bool = False) -> Trainer:
    framework = getattr(module, "framework", None)
    if type(device).__name__ == "CPUDevice":
        if framework != "pytorch":
            raise NotImplementedError(f"{device.name}: training module {module.name} on a CPUDevice needs a "
                                      f"PyTorchModule (got {type(module).__name__})")
        return TorchTrainer(device, module, is_loss)
    if isinstance(module, PyBudaModule):
        if is_loss:
            return BudaLossTrainer(device, module, is_loss)
        if any(p.requires_grad for p in module.get_parameters()):
            return CompiledTrainer(device, module, is_loss)
        return FrozenBudaTrainer(device, module, is_loss)
    return CompiledTrainer(device, module, is_loss)


class FrozenBudaTrainer(Trainer):
    """A PyBudaModule without trainable parameters: forward only; gradients cannot pass through it."""

    def forward(self, inputs):
        return tuple(_host(self.device.run_module(self.module, inputs))), None

    def backward(self, record, output_grads):
        return ()


def _host(values) -> tuple:
    return tuple(_to_numpy(v) for v in values)
