"""tt_lib.tensor: layouts, data types and ops against torch (PyBuda's rule, tight for float32)."""

import numpy as np
import pytest
import torch

import tt_lib
from tt_lib.device import Arch
from tt_lib.tensor import DataType, Layout, ReduceOpDim, ReduceOpMath, Tensor


@pytest.fixture(scope="module")
def device():
    dev = tt_lib.device.CreateDevice(Arch.WORMHOLE_B0, 4)
    tt_lib.device.InitializeDevice(dev)
    yield dev
    tt_lib.device.CloseDevice(dev)


def pcc(a, b) -> float:
    return float(np.corrcoef(np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel())[0, 1])


def run(device, fn, *torch_inputs, dtype=DataType.BFLOAT16):
    host = tt_lib.device.GetHost()
    tensors = [Tensor(x, dtype=dtype, layout=Layout.TILE).to(device) for x in torch_inputs]
    return fn(*tensors).to(host).to_torch()


torch.manual_seed(0)
A = torch.randn(1, 2, 64, 96)
B = torch.randn(1, 2, 64, 96)
W = torch.randn(1, 1, 96, 32)
POS = torch.rand(1, 2, 64, 96) + 0.5

CASES = [
    ("add", lambda a, b: a + b, (A, B)),
    ("sub", lambda a, b: a - b, (A, B)),
    ("mul", lambda a, b: a * b, (A, B)),
    ("matmul", lambda a, w: a @ w, (A, W)),
    ("bmm", lambda a, b: a @ b.transpose(-1, -2), (A, B)),
    ("relu", torch.relu, (A,)),
    ("gelu", torch.nn.functional.gelu, (A,)),
    ("exp", torch.exp, (A,)),
    ("recip", torch.reciprocal, (POS,)),
    ("sqrt", torch.sqrt, (POS,)),
    ("sigmoid", torch.sigmoid, (A,)),
    ("log", torch.log, (POS,)),
    ("softmax", lambda a: a.softmax(-1), (A,)),
    ("layernorm", lambda a: torch.nn.functional.layer_norm(a, (96,)), (A,)),
    ("transpose", lambda a: a.transpose(-1, -2), (A,)),
]


@pytest.mark.parametrize("name, golden, inputs", CASES, ids=[c[0] for c in CASES])
def test_op_matches_torch(device, name, golden, inputs):
    fn = getattr(tt_lib.tensor, name)
    if name == "bmm":
        fn = lambda a, b: tt_lib.tensor.bmm(a, tt_lib.tensor.transpose(b))  # noqa: E731
    expected = golden(*inputs)
    out = run(device, fn, *inputs)
    assert out.shape == expected.shape
    assert torch.allclose(out, expected, atol=0.1 * expected.abs().max().item()) or pcc(out, expected) >= 0.99
    exact = run(device, fn, *inputs, dtype=DataType.FLOAT32)
    assert pcc(exact, expected) >= 0.9999


def test_reshape_and_reduce(device):
    out = run(device, lambda a: tt_lib.tensor.reshape(a, 1, 1, -1, 96), A)
    assert out.shape == (1, 1, 128, 96)
    total = run(device, lambda a: tt_lib.tensor.reduce(a, ReduceOpMath.SUM, ReduceOpDim.HW, 1 / 64), A,
                dtype=DataType.FLOAT32)
    assert total.shape == (1, 2, 1, 1)
    assert torch.allclose(total, A.sum((-2, -1), keepdim=True) / 64, atol=1e-3)
    peak = run(device, lambda a: tt_lib.tensor.reduce(a, ReduceOpMath.MAX, ReduceOpDim.H), A, dtype=DataType.FLOAT32)
    assert torch.equal(peak, A.amax(-2, keepdim=True))


def test_tile_layout_orders_faces():
    values = torch.arange(32 * 32, dtype=torch.float32).reshape(1, 1, 32, 32)
    tiled = Tensor(values, dtype=DataType.FLOAT32, layout=Layout.TILE).data()
    assert tiled[:16] == list(range(16))                  # face 0, row 0
    assert tiled[16:32] == list(range(32, 48))            # face 0, row 1
    assert tiled[256:272] == list(range(16, 32))          # face 1, row 0
    back = Tensor(tiled, [1, 1, 32, 32], DataType.FLOAT32, Layout.TILE).to(Layout.ROW_MAJOR)
    assert back.data() == values.reshape(-1).tolist()


def test_bfloat16_rounds_on_construction():
    t = Tensor([1.0 + 2 ** -10, 3.0], [1, 2], DataType.BFLOAT16, Layout.ROW_MAJOR)
    assert t.data() == [1.0, 3.0]


def test_bad_inputs_are_clear(device):
    with pytest.raises(ValueError, match="multiples of 32"):
        Tensor(torch.ones(1, 1, 30, 32)).to(Layout.TILE)
    with pytest.raises(ValueError, match="do not fill"):
        Tensor([1.0, 2.0, 3.0], [1, 1, 2, 2])
    with pytest.raises(ValueError, match="TILE"):
        Tensor(torch.ones(32, 32), dtype=DataType.BFLOAT8_B)
    host_tensor = Tensor(torch.ones(1, 1, 32, 32))
    with pytest.raises(RuntimeError, match="on the host"):
        tt_lib.tensor.relu(host_tensor)
    on_device = host_tensor.to(device)
    with pytest.raises(RuntimeError, match=r"\.to\("):
        on_device.to_torch()
    with pytest.raises(ValueError, match="shapes"):
        tt_lib.tensor.add(on_device, Tensor(torch.ones(1, 1, 32, 64)).to(device))
    with pytest.raises(ValueError, match="inner dims"):
        tt_lib.tensor.matmul(on_device, Tensor(torch.ones(1, 1, 64, 32)).to(device))
