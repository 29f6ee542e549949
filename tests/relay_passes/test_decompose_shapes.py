"""DecomposeStackAndAdaptivePool: stack as concat; adaptive average pooling as mean or avg_pool2d."""

import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from relay_passes.decompose_shapes import DecomposeStackAndAdaptivePool


@I.ir_module
class Before:
    @R.function
    def main(a: R.Tensor((2, 3), "float32"), b: R.Tensor((2, 3), "float32"), img: R.Tensor((1, 4, 8, 6), "float32"),
             nhwc: R.Tensor((1, 8, 6, 4), "float32")):
        with R.dataflow():
            s = R.stack((a, b), axis=1)
            g = R.nn.adaptive_avg_pool2d(img, output_size=[1, 1])
            p = R.nn.adaptive_avg_pool2d(nhwc, output_size=[4, 3], layout="NHWC")
            R.output(s, g, p)
        return s, g, p


@I.ir_module
class Expected:
    @R.function
    def main(a: R.Tensor((2, 3), "float32"), b: R.Tensor((2, 3), "float32"), img: R.Tensor((1, 4, 8, 6), "float32"),
             nhwc: R.Tensor((1, 8, 6, 4), "float32")):
        with R.dataflow():
            a1 = R.expand_dims(a, axis=[1])
            b1 = R.expand_dims(b, axis=[1])
            s = R.concat((a1, b1), axis=1)
            g = R.mean(img, axis=[2, 3], keepdims=True)
            p = R.nn.avg_pool2d(nhwc, pool_size=[2, 2], strides=[2, 2], layout="NHWC", out_layout="NHWC")
            R.output(s, g, p)
        return s, g, p


def test_stack_and_adaptive_pools_are_decomposed():
    tvm.ir.assert_structural_equal(DecomposeStackAndAdaptivePool()(Before), Expected)


def test_adaptive_pool_to_sizes_that_do_not_divide_is_averaging_matmuls():
    import numpy as np
    import torch
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 3, 5, 7), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(relax.op.nn.adaptive_avg_pool2d(x, (3, 4)))
            b = bb.emit(relax.op.nn.adaptive_avg_pool2d(x, (5, 3)))
            out = bb.emit_output(relax.Tuple([a, b]))
        bb.emit_func_output(out)
    after = DecomposeStackAndAdaptivePool()(bb.get())
    assert "adaptive_avg_pool2d" not in after.script() and "R.matmul" in after.script()
    values = np.random.default_rng(0).standard_normal((2, 3, 5, 7)).astype(np.float32)
    vm = relax.VirtualMachine(tvm.compile(after, target="llvm"), tvm.cpu())
    got = [t.numpy() for t in vm["main"](tvm.runtime.tensor(values))]
    for out, size in zip(got, ((3, 4), (5, 3))):
        want = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(values), size).numpy()
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
