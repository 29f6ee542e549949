"""Host arrays handed to the Relax VM (compiled_model._vm_tensor): same values, dtype and rank,
shared memory when TVM can take it, an aligned copy (not a slow refused DLPack) otherwise."""

import numpy as np
import pytest

from tvm_buda.compiled_model import _DLPACK_ALIGNMENT, aligned_copy, _vm_tensor


def _unaligned(shape, dtype=np.float32):
    """An array whose data starts off the DLPack alignment."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buffer = np.zeros(size + 2 * _DLPACK_ALIGNMENT, np.uint8)
    start = -buffer.ctypes.data % _DLPACK_ALIGNMENT + np.dtype(dtype).itemsize
    out = buffer[start:start + size].view(dtype).reshape(shape)
    out[...] = np.arange(out.size).reshape(shape)
    assert out.ctypes.data % _DLPACK_ALIGNMENT
    return out


@pytest.mark.parametrize("array", [
    np.float32(2.5), np.zeros((0, 3), np.float32), np.arange(6, dtype=np.int64).reshape(2, 3).T,
    np.array([True, False]), _unaligned((5, 7)), _unaligned((3,), np.int32),
], ids=["0-d", "empty", "transposed-int64", "bool", "unaligned-f32", "unaligned-i32"])
def test_values_dtype_and_rank_kept(array):
    array = np.asarray(array)
    tensor = _vm_tensor(array)
    assert tuple(tensor.shape) == array.shape and str(tensor.dtype) == str(array.dtype)
    np.testing.assert_array_equal(tensor.numpy(), array)


def test_aligned_copy_is_aligned_and_independent():
    source = _unaligned((4, 33))
    copy = aligned_copy(source)
    assert copy.ctypes.data % _DLPACK_ALIGNMENT == 0 and copy.flags.c_contiguous
    np.testing.assert_array_equal(copy, source)
    source[0, 0] = -1
    assert copy[0, 0] == 0


def test_aligned_writable_array_is_shared_not_copied():
    array = aligned_copy(np.ones((8, 8), np.float32))
    tensor = _vm_tensor(array)
    array[0, 0] = 7.0   # the VM sees the same memory
    assert tensor.numpy()[0, 0] == 7.0


def test_unaligned_float_array_does_not_take_tvms_copy(monkeypatch):
    import tvm

    def refuse(*args, **kwargs):
        raise AssertionError("tvm.runtime.tensor called: the aligned DLPack path was missed")

    monkeypatch.setattr(tvm.runtime, "tensor", refuse)
    array = _unaligned((16, 64))
    np.testing.assert_array_equal(_vm_tensor(array).numpy(), array)


def test_uncopied_outputs_stay_valid_across_runs():
    """run_uncopied hands out the VM's memory (a training step's saved values): a later run must not
    write into memory a view still holds, and the values are run()'s."""
    import torch

    import tvm_buda

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    compiled = tvm_buda.compile_model(model, (torch.randn(8, 16),))
    x1, x2 = torch.randn(8, 16), torch.randn(8, 16)
    [first] = compiled.run_uncopied(x1)
    kept = first.copy()
    [second] = compiled.run_uncopied(x2)
    np.testing.assert_array_equal(first, kept)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(second, compiled.run(x2).numpy())


def test_ready_tensor_shares_memory_and_falls_back_when_not_ready():
    from tvm_buda.compiled_model import _ready_vm_tensor

    ready = aligned_copy(np.ones((8, 8), np.float32))
    tensor = _ready_vm_tensor(ready)
    ready[0, 0] = 5.0
    assert tensor.numpy()[0, 0] == 5.0                                # TVM holds the same memory
    unaligned = _unaligned((5, 7))
    np.testing.assert_array_equal(_ready_vm_tensor(unaligned).numpy(), unaligned)   # a promise broken: still right
