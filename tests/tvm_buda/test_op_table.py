"""Every op-table entry: a one-op Relax model lands on the device and matches numpy."""

from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F
import tvm
from tvm import relax

import pybuda
import tvm_buda
from buda_runtime_sim.kernels import KERNELS
from relay_passes.channels_last_convs import CHANNELS_LAST
from tests.helpers import assert_matches_golden
from tvm_buda import grad_ops
from tvm_buda.op_table import OP_TABLE

op = relax.op
RNG = np.random.default_rng(4)


def _f(*shape, positive=False):
    """Values bfloat16 holds exactly, so the device's input rounding cannot flip a comparison."""
    x = RNG.standard_normal(shape).astype(np.float32)
    return (np.abs(x) + 0.5 if positive else x).astype(ml_dtypes.bfloat16).astype(np.float32)


def _t(fn):
    """A torch reference on numpy arrays."""
    return lambda *xs: fn(*(torch.from_numpy(np.ascontiguousarray(x)) for x in xs)).numpy()


@dataclass
class Case:
    relax_op: str
    make: Callable            # (*vars) -> Relax expression
    inputs: list
    reference: Callable       # (*arrays) -> expected array
    id: str = ""

    @property
    def name(self) -> str:
        return self.id or self.relax_op.removeprefix("relax.").removeprefix("tvm_buda.")


A, B = _f(3, 33, 47), _f(3, 33, 47)
P = _f(3, 33, 47, positive=True)
R = np.round(_f(3, 33, 47), 0)
IMG = _f(2, 4, 11, 10)
NHWC = _f(2, 11, 10, 4)
EQ = np.where(RNG.random((3, 33, 47)) > 0.5, A, B)  # half the values equal to A


SOFTMAX_1 = torch.softmax(torch.from_numpy(A), 1).numpy()


def _layer_norm_grads(g, x, w, dim=-1):
    """torch.autograd's (dx, dgamma) of a layer norm along `dim` (zero bias)."""
    tx, tw = torch.from_numpy(x).requires_grad_(), torch.from_numpy(w).requires_grad_()
    out = F.layer_norm(tx.movedim(dim, -1), (x.shape[dim],), tw, torch.zeros_like(tw)).movedim(-1, dim)
    return torch.autograd.grad(out, (tx, tw), torch.from_numpy(g))


def _binary(name, reference, a=A, b=B):
    return Case("relax." + name, lambda x, y: getattr(op, name)(x, y), [a, b], reference)


def _unary(name, reference, a=A, make=None):
    parts = name.split(".")
    return Case("relax." + name, make or (lambda x: getattr(op.nn if parts[0] == "nn" else op, parts[-1])(x)), [a],
                reference)


CASES = [
    Case("relax.matmul", op.matmul, [_f(3, 33, 47), _f(47, 20)], np.matmul),
    Case("relax.matmul", op.matmul, [_f(2, 3, 9, 47), _f(2, 3, 47, 5)], np.matmul, "batch_matmul"),
    _binary("add", np.add), _binary("subtract", np.subtract), _binary("multiply", np.multiply),
    _binary("divide", np.divide, b=P), _binary("maximum", np.maximum), _binary("minimum", np.minimum),
    _binary("power", np.power, a=P, b=_f(3, 33, 47) * 0.5),
    _binary("equal", np.equal, b=EQ), _binary("not_equal", np.not_equal, b=EQ), _binary("greater", np.greater),
    _binary("greater_equal", np.greater_equal, b=EQ), _binary("less", np.less), _binary("less_equal", np.less_equal),
    _binary("logical_and", np.logical_and, a=A > 0, b=B > 0), _binary("logical_or", np.logical_or, a=A > 0, b=B > 0),
    Case("relax.where", op.where, [A > 0, A, B], np.where),
    _unary("nn.relu", lambda x: np.maximum(x, 0)), _unary("nn.gelu", _t(F.gelu)),
    _unary("nn.gelu_tanh", _t(lambda x: F.gelu(x, approximate="tanh"))),
    _unary("nn.leakyrelu", lambda x: np.where(x > 0, x, 0.2 * x), make=lambda x: op.nn.leakyrelu(x, 0.2)),
    _unary("sigmoid", _t(torch.sigmoid)), _unary("tanh", np.tanh), _unary("exp", np.exp), _unary("sqrt", np.sqrt, P),
    _unary("log", np.log, P), _unary("abs", np.abs), _unary("sin", np.sin), _unary("cos", np.cos),
    _unary("erf", _t(torch.erf)), _unary("logical_not", np.logical_not, A > 0),
    Case("relax.clip", lambda x: op.clip(x, -0.5, float("inf")), [A], lambda x: np.clip(x, -0.5, None)),
    Case("relax.astype", lambda x: op.astype(x, "float16"), [A], lambda x: x.astype(np.float16)),
    Case("relax.astype", lambda x: op.astype(x, "float32"), [A > 0], lambda x: x.astype(np.float32), "astype_bool"),
    _unary("nn.softmax", _t(lambda x: torch.softmax(x, -1))),
    Case("relax.nn.log_softmax", lambda x: op.nn.log_softmax(x, axis=1), [A], _t(lambda x: torch.log_softmax(x, 1))),
    Case("relax.nn.layer_norm", lambda x, g, b: op.nn.layer_norm(x, g, b, axes=[-1]), [A, _f(47), _f(47)],
         _t(lambda x, g, b: F.layer_norm(x, (47,), g, b))),
    Case(grad_ops.SOFTMAX_BW, lambda y, g: grad_ops.softmax_bw(y, g, 1), [SOFTMAX_1, B],
         lambda y, g: y * (g - (g * y).sum(1, keepdims=True))),
    Case(grad_ops.LAYERNORM_BW, lambda g, x, w: grad_ops.layernorm_bw(g, x, w, -1, 1e-5, 0), [B, A, _f(47)],
         lambda g, x, w: _layer_norm_grads(g, x, w)[0].numpy()),
    Case(grad_ops.LAYERNORM_BW, lambda g, x, w: grad_ops.layernorm_bw(g, x, w, 1, 1e-5, 1), [B, A, _f(33)],
         lambda g, x, w: _layer_norm_grads(g, x, w, 1)[1].numpy(), "layernorm_bw_weights"),
    Case(grad_ops.GELU_DERIVATIVE, grad_ops.gelu_derivative, [A],
         lambda x: torch.autograd.grad(F.gelu(x := torch.from_numpy(x).requires_grad_()).sum(), x)[0].numpy()),
    Case("relax.sum", lambda x: op.sum(x, axis=[1], keepdims=True), [A], lambda x: x.sum(1, keepdims=True)),
    Case("relax.mean", lambda x: op.mean(x, axis=[-1]), [A], lambda x: x.mean(-1)),
    Case("relax.max", lambda x: op.max(x, axis=[-2]), [A], lambda x: x.max(-2)),
    Case("relax.min", lambda x: op.min(x, axis=[0], keepdims=True), [A], lambda x: x.min(0, keepdims=True)),
    Case("relax.argmax", lambda x: op.argmax(x, axis=-1), [A], lambda x: np.argmax(x, -1)),
    Case("relax.nn.conv2d", lambda x, w: op.nn.conv2d(x, w, strides=2, padding=[1, 0, 2, 1], dilation=1),
         [IMG, _f(6, 4, 3, 3)], _t(lambda x, w: F.conv2d(F.pad(x, (0, 1, 1, 2)), w, stride=2))),
    Case("relax.nn.conv2d", lambda x, w: op.nn.conv2d(x, w, padding=1, groups=4), [IMG, _f(4, 1, 3, 3)],
         _t(lambda x, w: F.conv2d(x, w, padding=1, groups=4)), "depthwise_conv2d"),
    Case("relax.nn.conv2d", lambda x, w: op.nn.conv2d(x, w, padding=1, data_layout="NHWC"), [NHWC, _f(6, 4, 3, 3)],
         _t(lambda x, w: F.conv2d(x.permute(0, 3, 1, 2), w, padding=1).permute(0, 2, 3, 1)), "conv2d_nhwc"),
    Case("relax.nn.conv2d_transpose", lambda x, w: op.nn.conv2d_transpose(x, w, strides=2, padding=1,
                                                                          output_padding=1),
         [IMG, _f(4, 3, 3, 3)], _t(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1))),
    Case("relax.nn.max_pool2d", lambda x: op.nn.max_pool2d(x, 3, strides=2, padding=1, ceil_mode=True), [IMG],
         _t(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True))),
    Case("relax.nn.avg_pool2d", lambda x: op.nn.avg_pool2d(x, 2, strides=2, layout="NHWC"), [NHWC],
         _t(lambda x: F.avg_pool2d(x.permute(0, 3, 1, 2), 2, 2).permute(0, 2, 3, 1))),
    Case("relax.permute_dims", lambda x: op.permute_dims(x, [2, 0, 1]), [A], lambda x: x.transpose(2, 0, 1)),
    Case("relax.permute_dims", lambda x: op.permute_dims(x, [0, 2, 1]), [A], lambda x: x.transpose(0, 2, 1),
         "transpose"),
    Case("relax.reshape", lambda x: op.reshape(x, (33, 141)), [A], lambda x: x.reshape(33, 141)),
    Case("relax.flatten", op.flatten, [A], lambda x: x.reshape(-1)),
    Case("relax.squeeze", lambda x: op.squeeze(x, [0]), [A[:1]], lambda x: x[0]),
    Case("relax.expand_dims", lambda x: op.expand_dims(x, [1]), [A], lambda x: x[:, None]),
    Case("relax.broadcast_to", lambda x: op.broadcast_to(x, (2, 3, 33, 47)), [A[:, :1]],
         lambda x: np.broadcast_to(x, (2, 3, 33, 47))),
    Case("relax.strided_slice", lambda x: op.strided_slice(x, [2], [3], [40], [2]), [A], lambda x: x[..., 3:40:2]),
    Case("relax.concat", lambda x, y: op.concat([x, y], axis=1), [A, B[:, :5]], lambda x, y: np.concatenate([x, y], 1)),
    Case("relax.nn.pad", lambda x: op.nn.pad(x, [0, 0, 1, 2, 3, 0], "constant", 0.5), [A],
         lambda x: np.pad(x, [(0, 0), (1, 2), (3, 0)], constant_values=0.5)),
]


def _module(case: Case):
    bb = relax.BlockBuilder()
    params = [relax.Var(f"x{i}", relax.TensorType(np.shape(x), str(np.asarray(x).dtype)))
              for i, x in enumerate(case.inputs)]
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit_output(case.make(*params))
        bb.emit_func_output(out)
    return bb.get()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_one_op_model_runs_on_the_device(case):
    compiled = tvm_buda.build(_module(case), name=case.name.replace(".", "_"))
    op = case.relax_op.removeprefix("relax.")
    if case.relax_op in CHANNELS_LAST:  # an NCHW conv runs channels-last: one transpose in, one out
        assert compiled.device_ops() in ([op], ["permute_dims", op, "permute_dims"])
    else:
        assert compiled.device_ops() == [op]
    assert compiled.cpu_ops() == []
    out = compiled.run(*case.inputs)
    golden = case.reference(*case.inputs)
    assert out.shape == golden.shape and out.dtype == golden.dtype, (out.shape, out.dtype)
    if golden.dtype.kind in "biu":
        np.testing.assert_array_equal(out, golden)
    else:
        assert_matches_golden(out, golden, case.name)


def test_every_table_entry_has_a_one_op_case():
    covered = {case.relax_op for case in CASES}
    assert {entry.relax_op for entry in OP_TABLE} <= covered


@pytest.mark.parametrize("entry", OP_TABLE, ids=[e.name for e in OP_TABLE])
def test_entry_is_complete(entry):
    """The PyBuda op exists in the public API and as a kernel; the Relax op exists."""
    path = entry.pybuda_op.split(".")
    target = pybuda.op
    for part in path:
        target = getattr(target, part)
    assert callable(target)
    assert path[-1] in KERNELS
    if entry.relax_op.startswith(grad_ops.PREFIX):   # a call_pure_packed of our function
        assert tvm.get_global_func(entry.relax_op) is not None
    else:
        assert tvm_buda.op_table.ir.Op.get(entry.relax_op) is not None
    assert entry.num_args >= 1
