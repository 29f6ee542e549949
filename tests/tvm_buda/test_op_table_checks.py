"""What the op table refuses (it stays on the host) and the fused composites (matmul/conv + bias)."""

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

import tvm_buda
from tests.helpers import assert_matches_golden
from tvm_buda.op_composites import COMPOSITES, composite_patterns, lower_composite
from tvm_buda.op_table import supported_on_device

op = relax.op


def _var(shape, dtype="float32", name="x"):
    return relax.Var(name, relax.TensorType(shape, dtype))


def _call(expr):
    return relax.BlockBuilder().normalize(expr)


X = _var((1, 3, 10, 10))
REFUSED = {
    "int_add": op.add(_var((4, 4), "int32"), _var((4, 4), "int32", "y")),
    "float64": op.exp(_var((4, 4), "float64")),
    "conv_hwio": op.nn.conv2d(_var((1, 10, 10, 3)), _var((3, 3, 3, 4), name="w"), data_layout="NHWC",
                              kernel_layout="HWIO"),
    "sum_two_axes": op.sum(X, axis=[2, 3]),
    "sum_all": op.sum(X),
    "negative_stride": op.strided_slice(X, [3], [9], [0], [-1]),
    "two_axis_slice": op.strided_slice(X, [2, 3], [0, 0], [5, 5]),
    "layer_norm_no_scale": op.nn.layer_norm(X, _var((10,), name="g"), _var((10,), name="b"), axes=[-1], scale=False),
    "avg_pool_dilated": op.nn.avg_pool2d(X, 2, dilation=2),
    "pad_batch_dim": op.nn.pad(X, [1, 0, 0, 0, 0, 0, 0, 0]),
    "pad_circular": op.nn.pad(X, [0, 0, 0, 0, 0, 0, 1, 1], "circular"),
    "astype_int": op.astype(X, "int32"),
    "cumsum_not_in_table": op.cumsum(X, axis=1),
}


@pytest.mark.parametrize("name", REFUSED, ids=list(REFUSED))
def test_refused_calls(name):
    assert not supported_on_device(_call(REFUSED[name]))


def test_integer_ops_stay_on_the_host():
    bb = relax.BlockBuilder()
    x, y = _var((4, 4), "int32"), _var((4, 4), "int32", "y")
    with bb.function("main", [x, y]):
        with bb.dataflow():
            out = bb.emit_output(op.add(x, y))
        bb.emit_func_output(out)
    compiled = tvm_buda.build(bb.get(), name="int_add")
    assert compiled.device_ops() == [] and compiled.cpu_ops() == ["add"]
    a = np.arange(16, dtype=np.int32).reshape(4, 4) * 1000
    np.testing.assert_array_equal(compiled.run(a, a), 2 * a)


@I.ir_module
class DenseAndConv:
    @R.function
    def main(x: R.Tensor((8, 64), "float32"), w: R.Tensor((32, 64), "float32"), b: R.Tensor((32,), "float32"),
             img: R.Tensor((1, 3, 9, 9), "float32"), k: R.Tensor((4, 3, 3, 3), "float32"),
             kb: R.Tensor((4,), "float32")):
        with R.dataflow():
            wt = R.permute_dims(w, axes=[1, 0])
            mm = R.matmul(x, wt)
            dense = R.add(b, mm)  # the torch importer puts the bias first
            conv = R.nn.conv2d(img, k, padding=1)
            bias = R.reshape(kb, R.shape([1, 4, 1, 1]))
            out = R.add(conv, bias)
            R.output(dense, out)
        return dense, out


def _fused(mod):
    return relax.transform.FuseOpsByPattern(composite_patterns("buda."), bind_constants=False,
                                            annotate_codegen=False)(mod)


def _composites(mod) -> dict:
    return {str(f.attrs["Composite"]): f for _, f in mod.functions.items()
            if isinstance(f, relax.Function) and f.attrs is not None and "Composite" in f.attrs}


def test_matmul_and_conv_with_bias_become_one_op_each():
    composites = _composites(_fused(DenseAndConv))
    assert set(composites) == {"buda.matmul_bias", "buda.conv2d_bias"}
    dense = lower_composite(composites["buda.matmul_bias"])
    params = list(composites["buda.matmul_bias"].params)
    assert dense.op == "Matmul" and len(dense.inputs) == 3
    assert dense.inputs[2].same_as([p for p in params if p.ty.ndim == 1][0])  # the bias parameter
    conv = lower_composite(composites["buda.conv2d_bias"])
    assert conv.op == "Conv2d" and len(conv.inputs) == 3
    assert conv.attrs["padding"] == (1, 1, 1, 1) and conv.attrs["channel_last"] is False


def test_bias_that_is_not_per_channel_is_not_fused():
    @I.ir_module
    class FullTensorBias:
        @R.function
        def main(img: R.Tensor((1, 3, 9, 9), "float32"), k: R.Tensor((4, 3, 3, 3), "float32"),
                 other: R.Tensor((1, 4, 9, 9), "float32")):
            with R.dataflow():
                conv = R.nn.conv2d(img, k, padding=1)
                out = R.add(conv, other)
                R.output(out)
            return out

    assert _composites(_fused(FullTensorBias)) == {}


def test_lower_composite_ignores_functions_it_does_not_know():
    func = DenseAndConv["main"].with_attr("Composite", "buda.something_else")
    assert lower_composite(func) is None


def test_composites_name_their_ops_for_fallback_exclusion():
    for entry in COMPOSITES:
        assert all(tvm.ir.Op.get(name) is not None for name in entry.relax_ops)


def test_dense_and_conv_bias_model_matches_numpy_end_to_end():
    rng = np.random.default_rng(5)
    args = [rng.standard_normal([int(d) for d in p.ty.shape], dtype=np.float32)
            for p in DenseAndConv["main"].params]
    compiled = tvm_buda.build(DenseAndConv, name="dense_conv")
    dense, conv = compiled.run(*args)
    x, w, b, img, k, kb = args
    assert_matches_golden(dense, x @ w.T + b)
    import torch

    golden = torch.nn.functional.conv2d(torch.from_numpy(img), torch.from_numpy(k), torch.from_numpy(kb), padding=1)
    assert_matches_golden(conv, golden.numpy())
    assert compiled.cpu_ops() == []
