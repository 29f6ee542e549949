"""PrepareConvLayouts: TFLite's HWIO/HWOI kernels become OIHW (IOHW for transposed convs)."""

import numpy as np
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.prepare_conv_layouts import PrepareConvLayouts


@I.ir_module
class Before:
    """What TVM's TFLite importer emits for Conv2D and DepthwiseConv2D."""

    @R.function
    def main(x: R.Tensor((1, 9, 9, 3), "float32"), w: R.Tensor((3, 3, 3, 4), "float32"),
             dw: R.Tensor((3, 3, 4, 1), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC")
            d = R.nn.conv2d(c, dw, padding=[1, 1, 1, 1], groups=4, data_layout="NHWC", kernel_layout="HWOI",
                            out_layout="NHWC")
            R.output(d)
        return d


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((1, 9, 9, 3), "float32"), w: R.Tensor((3, 3, 3, 4), "float32"),
             dw: R.Tensor((3, 3, 4, 1), "float32")):
        with R.dataflow():
            w_oihw = R.permute_dims(w, axes=[3, 2, 0, 1])
            c = R.nn.conv2d(x, w_oihw, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="OIHW",
                            out_layout="NHWC")
            dw_oihw = R.permute_dims(dw, axes=[2, 3, 0, 1])
            d = R.nn.conv2d(c, dw_oihw, padding=[1, 1, 1, 1], groups=4, data_layout="NHWC", kernel_layout="OIHW",
                            out_layout="NHWC")
            R.output(d)
        return d


def test_kernels_are_permuted_to_oihw():
    tvm.ir.assert_structural_equal(PrepareConvLayouts()(Before), Expected)


def test_permuted_convolutions_compute_the_same_values():
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d) for d in p.ty.shape]).astype(np.float32) for p in Before["main"].params]

    def run(mod):
        vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
        return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()

    np.testing.assert_allclose(run(PrepareConvLayouts()(Before)), run(Before), rtol=1e-5, atol=1e-5)


def test_tflite_style_convolutions_run_on_the_device():
    import tvm_buda
    from tests.helpers import assert_matches_golden

    rng = np.random.default_rng(1)
    x, w, dw = (rng.standard_normal([int(d) for d in p.ty.shape]).astype(np.float32) for p in Before["main"].params)
    golden = relax.VirtualMachine(tvm.compile(Before, "llvm"), tvm.cpu())["main"](
        *[tvm.runtime.tensor(a) for a in (x, w, dw)]).numpy()
    compiled = tvm_buda.build(Before, params={"w": w, "dw": dw}, name="tflite_convs")
    assert compiled.cpu_ops() == []
    assert compiled.device_ops().count("nn.conv2d") == 2
    assert_matches_golden(compiled.run(x), golden)
