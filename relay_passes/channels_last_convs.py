"""ConvsChannelsLast: run convolution regions channels-last, as the device does.

PyBuda lowered a convolution to matrix work on channels-last tiles: output pixels as rows,
channels as columns. Relax's ConvertLayout turns every conv2d / conv2d_transpose to NHWC and
carries that layout through the pools and elementwise ops between them, so a region of convs
has one permute_dims where it starts and one where it ends, not a transpose per op. Kernels keep
their framework layout here; the device holds them as matrices (buda_runtime_sim conv_weights).
Modules without convolutions are left alone (ConvertLayout would still rewrite axis attributes).
ConvertLayout crashes on negative expand_dims/squeeze axes, so those are made positive first.
"""

import tvm
from tvm import relax

from .positive_axes import PositiveAxes

CHANNELS_LAST = {"relax.nn.conv2d": ["NHWC", "OIHW"], "relax.nn.conv2d_transpose": ["NHWC", "IOHW"]}


def _has_conv(mod: tvm.IRModule) -> bool:
    found = []

    def visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op) and expr.op.name in CHANNELS_LAST:
            found.append(expr)

    for func in mod.functions.values():
        if isinstance(func, relax.Function) and not found:
            relax.analysis.post_order_visit(func, visit)
    return bool(found)


@tvm.transform.module_pass(opt_level=0, name="ConvsChannelsLast")
class ConvsChannelsLast:
    def transform_module(self, mod: tvm.IRModule, ctx) -> tvm.IRModule:
        if not _has_conv(mod):
            return mod
        return relax.transform.ConvertLayout(CHANNELS_LAST)(PositiveAxes()(mod))
