"""PositiveAxes: expand_dims / squeeze with negative axes spelled with positive ones.

Relax's ConvertLayout (run by ConvsChannelsLast) dies with std::bad_alloc on an expand_dims or
squeeze whose axis is negative (PyTorch's importer writes -1 for unsqueeze(-1), pool1d...): it
indexes the layout string with the raw axis. The same axes counted from the front mean the same op.
"""

import tvm
from tvm import relax

from .call_rewrites import rewrite_calls


def _positive(make, rank_of):
    def rewrite(call: relax.Call) -> relax.Expr | None:
        if call.attrs.axis is None or all(int(a) >= 0 for a in call.attrs.axis):
            return None
        rank = rank_of(call)
        if rank is None:
            return None
        return make(call.args[0], [int(a) % rank for a in call.attrs.axis])

    return rewrite


def _rank(expr) -> int | None:
    ndim = int(getattr(expr.ty, "ndim", -1))
    return ndim if ndim >= 0 else None


_REWRITES = {
    # expand_dims' axes index the result, squeeze's the input
    "relax.expand_dims": _positive(relax.op.expand_dims, lambda call: _rank(call)),
    "relax.squeeze": _positive(relax.op.squeeze, lambda call: _rank(call.args[0])),
}


@tvm.transform.module_pass(opt_level=0, name="PositiveAxes")
class PositiveAxes:
    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        return rewrite_calls(mod, _REWRITES)
