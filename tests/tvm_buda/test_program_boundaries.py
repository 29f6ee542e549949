"""Crossing a device program's boundary: the VM's outputs as numpy views (compiled_model._flatten),
and a generated module's results copied into the VM's output tensors (DeviceSubgraph._run): the
values of the tensors' logical views, shapes checked, whatever the storage's padding."""

from types import SimpleNamespace

import numpy as np
import pytest
import tvm
import tvm_ffi

from buda_runtime_sim.dataformat import DataFormat
from buda_runtime_sim.tensor import Tensor
from tvm_buda.compiled_model import _flatten, aligned_copy
from tvm_buda.device_runtime import DeviceSubgraph


def _tvm(array):
    return tvm.runtime.from_dlpack(aligned_copy(np.asarray(array)))


def test_flatten_gives_views_in_order_through_nested_tuples():
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((4,), np.int64), np.full((1, 1), 7.0, np.float32)]
    tensors = [_tvm(a) for a in arrays]
    nested = tvm_ffi.Array([tensors[0], tvm_ffi.Array([tensors[1], tensors[2]])])
    flat = _flatten(nested)
    assert len(flat) == 3
    for got, want, tensor in zip(flat, arrays, tensors):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        got[...] = 0                                     # a view: the VM's own memory
        assert not tensor.numpy().any()
    [single] = _flatten(_tvm(arrays[0]))
    np.testing.assert_array_equal(single, arrays[0])


def _run(results, out_shapes, out_dtype=np.float32):
    """DeviceSubgraph._run with a stand-in module returning `results`; the VM outputs it wrote."""
    stub = SimpleNamespace(arg_roles=[], module=lambda *acts: results,
                           files=SimpleNamespace(source=SimpleNamespace(name="stub.py")))
    stub.module.name = "stub"
    outs = [_tvm(np.full(shape, -1, out_dtype)) for shape in out_shapes]
    DeviceSubgraph._run(stub, *outs)
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("shape", [(32, 64), (2, 32, 32), (30, 64), (64,), (5, 7), ()],
                         ids=["tile-multiple", "batched", "padded-rows", "1-d", "small", "0-d"])
def test_results_reach_the_outputs_as_their_logical_values(shape):
    values = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    [written] = _run([Tensor.from_array(values, DataFormat.Float32)], [shape])
    assert written.shape == shape
    np.testing.assert_array_equal(written, values)


def test_integer_and_host_results_keep_their_values():
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    written = _run([Tensor.from_array(ints), ints * 2], [(3, 4), (3, 4)], np.int32)
    np.testing.assert_array_equal(written[0], ints)
    np.testing.assert_array_equal(written[1], ints * 2)


def test_a_result_of_another_shape_is_an_error_even_when_its_storage_fits():
    """(30, 64) is stored as (32, 64): the storage's shape matching the output's is no excuse."""
    result = Tensor.from_array(np.ones((30, 64), np.float32))
    assert result.padded.shape == (32, 64)
    with pytest.raises(RuntimeError, match=r"produced shape \(30, 64\), the graph expects \(32, 64\)"):
        _run([result], [(32, 64)])
    with pytest.raises(RuntimeError, match="returned 1 outputs, the graph expects 2"):
        _run([result], [(30, 64), (30, 64)])
