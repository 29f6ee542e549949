"""Our converters for aten ops where TVM 0.27's exported-program importer is missing one or departs
from PyTorch's semantics; passed to it as its custom_convert_map (PyTorch is the reference)."""

from __future__ import annotations


def _cumsum_with_output_dtype(node, importer):
    """torch.cumsum of bools is int64; TVM's converter types it bool, which LLVM cannot add (GPT-2)."""
    from tvm import relax

    x = importer.env[node.args[0]]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    out = node.meta.get("val")
    dtype = str(out.dtype).removeprefix("torch.") if out is not None else None
    return importer.block_builder.emit(relax.op.cumsum(x, dim, dtype))


def _product_in_its_dtype(node, importer):
    """aten mm / bmm / matmul / addmm / linear give their inputs' dtype; TVM's converters always ask
    float32, so a bfloat16 model's products, residual stream and logits were float32 while
    PyTorch's are bfloat16."""
    from tvm import relax

    op = node.target.__name__
    args = importer.retrieve_args(node)
    out = node.meta.get("val")
    dtype = str(out.dtype).removeprefix("torch.") if out is not None else "float32"
    bb = importer.block_builder
    if op == "linear.default":
        return bb.emit(relax.op.linear(args[0], args[1], args[2] if len(args) > 2 else None, dtype))
    if op != "addmm.default":
        return bb.emit(relax.op.matmul(args[0], args[1], out_dtype=dtype))
    alpha, beta = node.kwargs.get("alpha", 1), node.kwargs.get("beta", 1)
    product = bb.emit(relax.op.matmul(args[1], args[2], out_dtype=dtype))
    if alpha != 1:
        product = bb.emit(relax.op.multiply(product, relax.const(alpha, dtype)))
    if beta == 0:
        return product
    bias = args[0] if beta == 1 else bb.emit(relax.op.multiply(args[0], relax.const(beta, dtype)))
    return bb.emit(relax.op.add(product, bias))


def _extreme(reduce):
    """torch.amax / torch.amin (TVM 0.27's importer has no converter): a max / min reduction."""

    def convert(node, importer):
        x = importer.env[node.args[0]]
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", ())
        keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
        axis = None if dim in ((), [], None) else list(dim) if isinstance(dim, (list, tuple)) else [dim]
        return importer.block_builder.emit(reduce(x, axis, bool(keepdim)))

    return convert


def _cat_skipping_empty(node, importer):
    """torch.cat skips 1-D empty tensors whatever the other inputs' rank (a transformers
    DynamicCache's empty layer concatenated with the first keys: OPT question answering); TVM's
    concat wants one rank."""
    from tvm import relax

    tensors = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    kept = [t for t in tensors if _shape(t) != (0,)] or tensors[:1]
    values = [importer.env[t] for t in kept]
    if len(values) == 1:
        return values[0]
    return importer.block_builder.emit(relax.op.concat(values, axis=dim))


def _index_tensor(node, importer):
    """aten.index.Tensor with PyTorch's rule: the index tensors broadcast together; when they index
    adjacent dims their result dims stand where those dims were, else in front (numpy's rule). TVM's
    converter, given slices (None) between, broadcast an arange of each sliced dim against the
    indices instead (ConvBERT's unfold: "cannot broadcast index shapes 32 vs 9")."""
    from tvm import relax

    data = importer.env[node.args[0]]
    indices = list(node.args[1])
    axes = [i for i, idx in enumerate(indices) if idx is not None]
    bb = importer.block_builder
    values = [importer.env[indices[i]] for i in axes]
    if any(str(v.ty.dtype) == "bool" for v in values):
        raise NotImplementedError("aten.index.Tensor with a boolean mask (a data-dependent shape)")
    sizes = _shape(node.args[0])
    values = [_wrapped_index(bb, v, sizes[axis]) for v, axis in zip(values, axes)]
    if len(axes) == 1:     # take places its index dims at the axis: PyTorch's rule for one index
        return bb.emit(relax.op.take(data, values[0], axis=axes[0]))
    ndim = len(_shape(node.args[0]))
    rest = [i for i in range(ndim) if i not in axes]
    if axes != list(range(len(axes))):
        data = bb.emit(relax.op.permute_dims(data, axes + rest))
    out = bb.emit(relax.op.index_tensor(data, values))
    adjacent = axes == list(range(axes[0], axes[-1] + 1))
    if adjacent and axes[0] > 0:            # the broadcast dims go back where the indexed dims were
        width = len(_shape(node)) - len(rest)
        order = list(range(width, width + axes[0])) + list(range(width)) + list(range(width + axes[0], width + len(rest)))
        out = bb.emit(relax.op.permute_dims(out, order))
    return out


def _select(node, importer):
    """x.select(dim, i) with PyTorch's negative i (from the end): TVM's converter took i as is, so
    x[:, -1] read out of range (SigLIP's pooled text output: NaN on plain TVM, the first token here)."""
    from tvm import relax

    x = importer.env[node.args[0]]
    dim, index = node.args[1], node.args[2]
    size = _shape(node.args[0])[dim]
    return importer.block_builder.emit(relax.op.take(x, relax.const(index + size if index < 0 else index, "int64"),
                                                     dim))


def _wrapped_index(bb, index, size: int):
    """A negative index counts from the end, as in PyTorch (Falcon's fused heads: qkv[..., [-2], :]);
    TVM's take and index_tensor would read out of range (clipped to the first row)."""
    import numpy as np
    from tvm import relax

    from relay_passes.scalars import constant_array

    dtype = str(index.ty.dtype)
    values = constant_array(index)
    if values is not None:
        return relax.const(np.where(values < 0, values + size, values).astype(dtype), dtype) if (values < 0).any() \
            else index
    negative = bb.emit(relax.op.less(index, relax.const(0, dtype)))
    return bb.emit(relax.op.where(negative, relax.op.add(index, relax.const(size, dtype)), index))


def _arange(node, importer):
    """torch.arange of literal bounds as the constant it is: TVM 0.27's arange counts a negative
    step's elements wrongly (arange(16, -16, -1) typed as 34 elements, not 32: Funnel's relative
    positions). Bounds from other nodes go to TVM's converter."""
    import numpy as np
    import torch
    from tvm import relax

    out = node.meta.get("val")
    bounds = list(node.args) + [node.kwargs[k] for k in ("start", "end", "step") if k in node.kwargs]
    if out is None or not all(isinstance(b, (int, float)) for b in bounds):
        return importer._arange(node)
    start, end, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    dtype = str(out.dtype).removeprefix("torch.")
    values = torch.arange(start, end, step, dtype=out.dtype).numpy() if dtype != "bfloat16" else None
    if values is None or values.shape != tuple(out.shape):
        return importer._arange(node)
    return relax.const(np.ascontiguousarray(values), dtype)


def _true_divide(node, importer):
    """a / b of integer tensors is a float tensor in PyTorch (true division); TVM's converter divided
    the integers (DeBERTa-v2/v3's log-bucketed relative positions, then relax.log of an int64)."""
    from tvm import relax

    dtype = _dtype(node)
    if node.kwargs.get("rounding_mode") is not None or dtype is None or not dtype.startswith("float") or \
            all(_is_float(importer, a) for a in node.args[:2]):
        return _theirs(importer, node)
    a, b = (_as_dtype(importer, arg, dtype) for arg in node.args[:2])
    return importer.block_builder.emit(relax.op.divide(a, b))


def _float_unary(op):
    """log, exp, sqrt, ... of an integer tensor compute in the default float dtype, as in PyTorch;
    TVM's relax ops refuse integer inputs."""

    def convert(node, importer):
        dtype = _dtype(node)
        if _is_float(importer, node.args[0]) or dtype is None or not dtype.startswith("float"):
            return _theirs(importer, node)
        return importer.block_builder.emit(op(_as_dtype(importer, node.args[0], dtype)))

    return convert


def _integer_clamp(node, importer):
    """clamp of an integer tensor with one bound: TVM's converter puts +-inf in for the other, which
    an integer clip cannot hold ("Cannot convert infinity to BigInt" when it is built)."""
    from tvm import relax

    low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min")
    high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max")
    if _is_float(importer, node.args[0]) or not all(b is None or isinstance(b, int) for b in (low, high)):
        return _theirs(importer, node)
    x = importer.env[node.args[0]]
    dtype = str(x.ty.dtype)
    if low is not None:
        x = importer.block_builder.emit(relax.op.maximum(x, relax.const(low, dtype)))
    if high is not None:
        x = importer.block_builder.emit(relax.op.minimum(x, relax.const(high, dtype)))
    return x


def _topk_any_order(node, importer):
    """topk(sorted=False) promises no order, so the sorted answer is one (MoE routers ask for it:
    EXAONE-MoE, MiniMax); TVM 0.27's converter refuses it."""
    from tvm import relax

    args = list(node.args) + [None] * (5 - len(node.args))
    k = args[1] if args[1] is not None else node.kwargs.get("k", 1)
    dim = args[2] if args[2] is not None else node.kwargs.get("dim", -1)
    largest = args[3] if args[3] is not None else node.kwargs.get("largest", True)
    x = importer.env[node.args[0]]
    return importer.block_builder.emit(relax.op.topk(x, k=k, axis=dim, largest=largest, ret_type="both",
                                                     dtype="int64"))


def _theirs(importer, node):
    """TVM's own converter for the node's op (built once per importer)."""
    table = getattr(importer, "_tvm_buda_their_converters", None)
    if table is None:
        table = importer._tvm_buda_their_converters = type(importer).create_convert_map(importer)
    return table[node.target.__name__](node)


def _dtype(node) -> str | None:
    value = getattr(node, "meta", {}).get("val")
    return str(value.dtype).removeprefix("torch.") if hasattr(value, "dtype") else None


def _is_float(importer, arg) -> bool:
    if isinstance(arg, float):
        return True
    if isinstance(arg, (int, bool)):
        return False
    return str(importer.env[arg].ty.dtype).startswith(("float", "bfloat"))


def _as_dtype(importer, arg, dtype: str):
    from tvm import relax

    if isinstance(arg, (int, float, bool)):
        return relax.const(arg, dtype)
    value = importer.env[arg]
    return value if str(value.ty.dtype) == dtype else importer.block_builder.emit(relax.op.astype(value, dtype))


def _shape(node) -> tuple | None:
    """The traced shape of an fx node's value (None when the trace recorded none)."""
    value = getattr(node, "meta", {}).get("val")
    return tuple(value.shape) if hasattr(value, "shape") else None


def converters() -> dict:
    from tvm import relax

    return {"cumsum.default": _cumsum_with_output_dtype,
            "amax.default": _extreme(relax.op.max), "amin.default": _extreme(relax.op.min),
            "cat.default": _cat_skipping_empty, "index.Tensor": _index_tensor,
            "select.int": _select, "topk.default": _topk_any_order, "clamp.default": _integer_clamp,
            "arange.default": _arange, "arange.start": _arange, "arange.start_step": _arange,
            "div.Tensor": _true_divide, "div.Scalar": _true_divide,
            **{f"{name}.default": _product_in_its_dtype for name in ("mm", "bmm", "matmul", "addmm", "linear")},
            **{f"{name}.default": _float_unary(getattr(relax.op, name))
               for name in ("log", "exp", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf")}}
