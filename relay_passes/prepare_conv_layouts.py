"""PrepareConvLayouts: give every convolution the kernel layout the device's ops take.

TFLite convolutions arrive as NHWC data with HWIO (HWOI for depthwise) kernels. The device runs
NHWC natively (Conv2d's channel_last), but wants weights as OIHW (IOHW for Conv2dTranspose), so
the weight gets a permute_dims, which FoldConstant removes when the weight is a constant.
"""

from tvm import relax
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

DEVICE_KERNEL_LAYOUT = {"relax.nn.conv2d": "OIHW", "relax.nn.conv2d_transpose": "IOHW"}


@function_pass(opt_level=0, name="PrepareConvLayouts")
class PrepareConvLayouts:
    def __init__(self):
        self.data, self.weight = wildcard(), wildcard()
        self.conv = is_op("relax.nn.conv2d")(self.data, self.weight)
        self.conv_transpose = is_op("relax.nn.conv2d_transpose")(self.data, self.weight)
        self.pattern = self.conv | self.conv_transpose

    def transform_function(self, func, mod, ctx):
        return rewrite_call(self.pattern, self.rewrite, func)

    def rewrite(self, expr, matches):
        call = matches[self.conv] if self.conv in matches else matches[self.conv_transpose]
        a = call.attrs
        wanted = DEVICE_KERNEL_LAYOUT[call.op.name]
        if a.kernel_layout == wanted or sorted(a.kernel_layout) != sorted(wanted):
            return expr
        if a.data_layout not in ("NCHW", "NHWC") or a.out_layout != a.data_layout:
            return expr
        weight = relax.op.permute_dims(matches[self.weight], [a.kernel_layout.index(d) for d in wanted])
        common = dict(strides=a.strides, padding=a.padding, dilation=a.dilation, groups=a.groups,
                      data_layout=a.data_layout, kernel_layout=wanted, out_layout=a.out_layout,
                      out_dtype=a.out_dtype if a.out_dtype else None)
        if call.op.name == "relax.nn.conv2d":
            return relax.op.nn.conv2d(matches[self.data], weight, **common)
        return relax.op.nn.conv2d_transpose(matches[self.data], weight, output_padding=a.output_padding, **common)
