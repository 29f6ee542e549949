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


def _shape(node) -> tuple | None:
    """The traced shape of an fx node's value (None when the trace recorded none)."""
    value = getattr(node, "meta", {}).get("val")
    return tuple(value.shape) if hasattr(value, "shape") else None


def converters() -> dict:
    from tvm import relax

    return {"cumsum.default": _cumsum_with_output_dtype,
            "amax.default": _extreme(relax.op.max), "amin.default": _extreme(relax.op.min),
            "cat.default": _cat_skipping_empty}
