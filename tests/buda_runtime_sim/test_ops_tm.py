"""Tensor manipulation kernels vs numpy: they move values without changing them."""

import numpy as np
import pytest

import pybuda
from buda_runtime_sim import context
from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.numerics_config import NumericsConfig

RNG = np.random.default_rng(2)


@pytest.fixture(autouse=True)
def fp32():
    numerics = NumericsConfig(default_df_override=DataFormat.Float32)
    with context.use(context.ExecutionContext(numerics=numerics)):
        yield


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _eq(out, golden):
    np.testing.assert_array_equal(out.numpy(), golden)


def test_transpose_permute_reshape_squeeze_unsqueeze():
    x = _data(2, 3, 33, 40)
    _eq(pybuda.op.Transpose("t", x, -1, -2), x.swapaxes(-1, -2))
    _eq(pybuda.op.Transpose("t", x, 0, 2), x.swapaxes(0, 2))
    _eq(pybuda.op.Permute("p", x, (2, 0, 3, 1)), x.transpose(2, 0, 3, 1))
    _eq(pybuda.op.Reshape("r", x, (6, 33, 40)), x.reshape(6, 33, 40))
    _eq(pybuda.op.Squeeze("s", x[:1], 0), x[0])
    _eq(pybuda.op.Unsqueeze("u", x, -1), x[..., None])
    _eq(pybuda.op.Identity("i", x, unsqueeze="unsqueeze", unsqueeze_dim=1), x[:, None])


def test_reshape_along_tile_rows_keeps_values():
    x = _data(2, 64, 40)
    _eq(pybuda.op.Reshape("r", x, (128, 40)), x.reshape(128, 40))
    _eq(pybuda.op.Reshape("r", x, (-1, 4, 20)), x.reshape(-1, 4, 20))


def test_reshape_to_a_scalar_stays_zero_dim():
    out = pybuda.op.Reshape("r", _data(1, 1), ())
    assert out.shape == () and out.numpy().shape == ()


def test_broadcasts():
    x = _data(3, 1, 5)
    _eq(pybuda.op.Broadcast("b", x, 1, 7), np.broadcast_to(x, (3, 7, 5)))
    _eq(pybuda.op.BroadcastTo("b", x, (2, 3, 4, 5)), np.broadcast_to(x, (2, 3, 4, 5)))


def test_index_and_select():
    x = _data(2, 5, 40)
    _eq(pybuda.op.Index("i", x, -1, 3, 30, 4), x[..., 3:30:4])
    _eq(pybuda.op.Index("i", x, 1, 1), x[:, 1:])
    _eq(pybuda.op.Select("s", x, -1, (2, 3), stride=10), x[..., [2, 3, 4, 12, 13, 14, 22, 23, 24, 32, 33, 34]])
    _eq(pybuda.op.Select("s", x, 1, 4), x[:, 4:5])


def test_hslice_hstack_vslice_vstack_round_trip():
    x = _data(1, 2, 64, 96)
    h = pybuda.op.HSlice("hs", x, 3)
    assert h.shape == (1, 6, 64, 32)
    _eq(h, x.reshape(1, 2, 64, 3, 32).transpose(0, 1, 3, 2, 4).reshape(1, 6, 64, 32))
    _eq(pybuda.op.HStack("hst", h, 3), x)
    v = pybuda.op.VSlice("vs", x, 2)
    assert v.shape == (1, 4, 32, 96)
    _eq(v, x.reshape(1, 4, 32, 96))
    _eq(pybuda.op.VStack("vst", v, 2), x)
    assert pybuda.op.HStack("hst", h).shape == (1, 1, 64, 192)  # slices=-1: all of Z


@pytest.mark.parametrize("mode, numpy_mode", [("constant", "constant"), ("replicate", "edge"), ("reflect", "reflect")])
def test_pad(mode, numpy_mode):
    x = _data(2, 3, 7, 9)
    _eq(pybuda.op.Pad("p", x, (1, 2, 3, 0), mode=mode), np.pad(x, [(0, 0), (0, 0), (3, 0), (1, 2)], mode=numpy_mode))
    _eq(pybuda.op.Pad("p", x, (2, 1), mode=mode, channel_last=True),
        np.pad(x, [(0, 0), (0, 0), (2, 1), (0, 0)], mode=numpy_mode))
    _eq(pybuda.op.Pad("p", x, (1, 1), value=-2.0), np.pad(x, [(0, 0)] * 3 + [(1, 1)], constant_values=-2.0))


def test_concatenate_and_binary_stack():
    a, b, c = _data(2, 3, 5), _data(2, 4, 5), _data(2, 1, 5)
    _eq(pybuda.op.Concatenate("c", a, b, c, axis=1), np.concatenate([a, b, c], axis=1))
    a2 = _data(2, 3, 5)
    stacked = pybuda.op.BinaryStack("bs", a, a2, dim=-1)
    assert stacked.shape == (2, 3, 10)
    _eq(stacked, np.stack([a, a2], axis=-1).reshape(2, 3, 10))


def test_cast_and_constant():
    x = _data(4, 5)
    _eq(pybuda.op.Cast("c", x, "float16"), x.astype(np.float16).astype(np.float32))
    _eq(pybuda.op.Cast("c", x, "float32"), x)
    assert pybuda.op.Cast("c", x > 0, "bool").numpy().dtype == np.bool_
    _eq(pybuda.op.Constant("k", constant=2.5), np.full((1, 1), 2.5, np.float32))
    _eq(pybuda.op.Constant("k", constant=-1.0, shape=(2, 3)), np.full((2, 3), -1.0, np.float32))


def test_identity_and_buffer_keep_values_and_format():
    x = pybuda.Tensor.from_array(_data(3, 4), DataFormat.Float16_b)
    for op in (pybuda.op.Identity, pybuda.op.Buffer):
        out = op("i", x)
        assert out.data_format == DataFormat.Float16_b
        _eq(out, x.numpy())


def test_tile_transpose_of_an_activation_is_a_view_of_a_weight_a_fresh_layout():
    from buda_runtime_sim.tensor import Tensor

    x = Tensor.from_array(_data(2, 40, 70))
    out = pybuda.op.Transpose("t", x, dim0=-2, dim1=-1)
    assert np.shares_memory(out.padded, x.padded)                 # no copy per step
    _eq(out, np.swapaxes(x.numpy(), -1, -2))
    assert not out.padded[..., 70:, :].any() and not out.padded[..., :, 40:].any()   # padding moved along
    weight = Tensor.from_array(_data(40, 70))
    weight.padded.flags.writeable = False                         # as Parameter.device_tensor holds it
    laid_out = pybuda.op.Transpose("w", weight, dim0=0, dim1=1)
    assert laid_out.padded.flags.c_contiguous and not np.shares_memory(laid_out.padded, weight.padded)
    _eq(laid_out, weight.numpy().T)
    rhs = Tensor.from_array(_data(2, 40, 8))
    contiguous = Tensor.from_array(np.ascontiguousarray(np.swapaxes(x.numpy(), -1, -2)))
    _eq(pybuda.op.Matmul("mm", out, rhs), pybuda.op.Matmul("mm2", contiguous, rhs).numpy())   # same bits
