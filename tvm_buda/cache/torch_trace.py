"""What a PyTorch model computes, hashed without its source file: the ATen ops its forward runs
for the sample shapes, as torch.export would see them, and every weight's bytes.

The forward runs once under a dispatch mode that records each op, its non-tensor arguments and
where each tensor argument came from (an input, a weight by name, an earlier op's output, or a
constant by value). Matrix products are not computed (zeros of their shape stand in): an
exportable model's ops do not depend on values, and the products are nearly all of a forward's
time, so recording BERT-base takes milliseconds. A model whose Python reads values and fails on
those zeros is recorded again with every op computed. (Meta tensors would compute nothing, but
their Python kernels import torch._dynamo: seconds of a warm start.) Classes defined under
`python -c`, `exec` or a notebook cell hash like any other, and an edit to forward() or any
helper it calls changes the ops, hence the key.
"""

from __future__ import annotations

import enum

import blake3
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from ..frontends.imported import split_samples


class _Recorder(TorchDispatchMode):
    """Hashes every op the forward runs; tensors are named by where they came from."""

    def __init__(self, digest, labels: dict[int, str], compute_products: bool):
        super().__init__()
        self.digest = digest
        self.compute_products = compute_products
        self.labels = labels     # id(tensor) -> its origin
        self.alive = []          # every tensor seen, so no id is reused while recording
        self.ops = 0

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False   # nothing is compiled while recording: don't import torch._dynamo (seconds) to guard it

    def describe(self, value) -> str:
        if isinstance(value, torch.Tensor):
            label = self.labels.get(id(value))
            if label is not None:
                return label
            return _constant(value)
        if isinstance(value, (list, tuple)):
            inner = ",".join(self.describe(v) for v in value)
            return f"[{inner}]" if isinstance(value, list) else f"({inner})"
        if isinstance(value, dict):
            return "{" + ",".join(f"{k}:{self.describe(v)}" for k, v in sorted(value.items())) + "}"
        if isinstance(value, torch.device):
            return "device"      # where it runs is not part of what is computed
        if value is None or isinstance(value, (bool, int, float, complex, str, torch.dtype, torch.layout,
                                               torch.memory_format, enum.Enum)):
            return repr(value)
        return type(value).__qualname__   # an object (a transformers cache): its repr may hold an address

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        line = f"{func}{self.describe(args)}{self.describe(kwargs)}"
        shape = None if self.compute_products else _product_shape(func, args)
        out = func(*args, **kwargs) if shape is None else torch.zeros(shape, dtype=args[-1].dtype)
        index = self.ops
        self.ops += 1
        flat, _ = tree_flatten(out)
        shapes = []
        for j, t in enumerate(flat):
            if isinstance(t, torch.Tensor):
                self.labels[id(t)] = f"%{index}.{j}"
                self.alive.append(t)
                shapes.append(f"{t.dtype}{tuple(t.shape)}{t.stride()}")
        self.digest.update(f"{line}->{shapes}\n".encode())
        return out


def _product_shape(func, args) -> tuple | None:
    """The result shape of a matrix product (not computed while recording), else None."""
    name = func.__name__.split(".")[0]
    if name in ("mm", "addmm"):
        a, b = args[-2], args[-1]
        return (a.shape[0], b.shape[1])
    if name in ("bmm", "baddbmm"):
        a, b = args[-2], args[-1]
        return (a.shape[0], a.shape[1], b.shape[2])
    return None


def _constant(tensor: torch.Tensor) -> str:
    """A tensor the forward made from Python values or holds outside its weights: hashed by value."""
    head = f"const:{tensor.dtype}{tuple(tensor.shape)}"
    data = tensor.detach().contiguous().reshape(-1)
    return f"{head}:{blake3.blake3(data.view(torch.uint8).numpy()).hexdigest()}"


def _weights_hash(module: torch.nn.Module, digest) -> dict[str, torch.Tensor]:
    """Hash every parameter and buffer (name, dtype, shape, bytes); returns them by name."""
    tensors = {**dict(module.named_parameters()), **dict(module.named_buffers())}
    for name, tensor in tensors.items():
        t = tensor.detach().contiguous()
        digest.update(f"{name}:{t.dtype}:{tuple(t.shape)}\n".encode())
        if t.numel():
            digest.update(t.reshape(-1).view(torch.uint8).numpy())
    return tensors


def _inputs(sample_inputs) -> tuple[tuple, dict]:
    args, kwargs = split_samples(sample_inputs)
    args = tuple(x if isinstance(x, torch.Tensor) else torch.as_tensor(x) for x in args)
    kwargs = {k: v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for k, v in kwargs.items()}
    return args, kwargs


def _run(module, tensors: dict, args: tuple, kwargs: dict, compute_products: bool) -> str:
    """The hash of the ops of one forward."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    labels = {id(t): f"weight:{name}" for name, t in tensors.items()}
    labels.update({id(a): f"input:{i}" for i, a in enumerate(args)})
    labels.update({id(v): f"input:{k}" for k, v in kwargs.items()})
    digest = blake3.blake3()
    recorder = _Recorder(digest, labels, compute_products)
    from ..frontends.pytorch import exportable_configs

    with torch.no_grad(), sdpa_kernel([SDPBackend.MATH]), exportable_configs(module, kwargs), recorder:
        out = module(*args, **kwargs)                                   # as the frontend exports it
    flat, spec = tree_flatten(out)
    digest.update(f"outputs:{[recorder.describe(t) for t in flat]}:{spec}".encode())
    return digest.hexdigest()


def torch_fingerprint(module: torch.nn.Module, sample_inputs, digest) -> bool:
    """Add what `module` computes on inputs shaped like `sample_inputs` to `digest`; False when its
    forward fails on them (the compile then reports why, as it would without the cache)."""
    try:
        module.eval()                       # as the frontend exports it
    except NotImplementedError:
        pass
    tensors = _weights_hash(module, digest)
    args, kwargs = _inputs(sample_inputs)
    try:
        ops = "zero products:" + _run(module, tensors, args, kwargs, compute_products=False)
    except Exception:  # noqa: BLE001 - its Python needs the products' values: computed this time
        try:
            ops = "computed:" + _run(module, tensors, args, kwargs, compute_products=True)
        except Exception:  # noqa: BLE001
            return False
    digest.update(ops.encode())
    return True
