"""SimplifyLayoutChains: collapse chains of data movement that importers leave behind.

reshape(reshape(x)) -> one reshape; a reshape or broadcast_to to the shape x already has -> x;
permute_dims(permute_dims(x)) -> one permute_dims (none if it is the identity); a permute_dims
that only moves dims of size 1 (a bias moved to NHWC) -> a reshape. Every op removed
is a device op (and a tile relayout) saved, and BERT's attention alone carries several.
"""

from tvm import relax
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

from .scalars import static_shape


def _axes(call: relax.Call) -> list[int]:
    ndim = call.args[0].ty.ndim
    return [int(a) for a in call.attrs.axes] if call.attrs.axes is not None else list(reversed(range(ndim)))


def _moves_only_unit_dims(shape, axes: list[int]) -> bool:
    """A permutation that keeps every dim of size > 1 in order moves no data: it is a reshape."""
    if shape is None:
        return False
    kept = [a for a in axes if shape[a] != 1]
    return kept == sorted(kept)


@function_pass(opt_level=0, name="SimplifyLayoutChains")
class SimplifyLayoutChains:
    def __init__(self):
        self.x = wildcard()
        reshape = is_op("relax.reshape")(self.x, wildcard())
        self.reshape_chain = is_op("relax.reshape")(reshape, wildcard())
        self.reshape = is_op("relax.reshape")(self.x, wildcard())
        self.broadcast = is_op("relax.broadcast_to")(self.x, wildcard())
        self.permute = is_op("relax.permute_dims")(self.x)
        self.permute_chain = is_op("relax.permute_dims")(self.permute)
        # Longer chains first: the matcher takes the first alternative that fits.
        self.roots = [self.reshape_chain, self.permute_chain, self.reshape, self.broadcast, self.permute]
        self.pattern = self.roots[0] | self.roots[1] | self.roots[2] | self.roots[3] | self.roots[4]

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        root = next(p for p in self.roots if p in matches)
        call, x = matches[root], matches[self.x]
        if root in (self.permute_chain, self.permute):
            axes = _axes(call)
            if root is self.permute_chain:
                inner = _axes(matches[self.permute])
                axes = [inner[a] for a in axes]
            if axes == list(range(len(axes))):
                return x
            out_shape = static_shape(call)
            if out_shape is not None and _moves_only_unit_dims(static_shape(x), axes):
                return relax.op.reshape(x, out_shape)
            return relax.op.permute_dims(x, axes) if root is self.permute_chain else expr
        shape = static_shape(call)
        if shape is not None and shape == static_shape(x):
            return x  # a reshape or broadcast_to to the shape x already has
        if root is self.reshape_chain and shape is not None:
            return relax.op.reshape(x, shape)
        return expr
