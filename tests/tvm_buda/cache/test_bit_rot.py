"""Bit rot in a cache entry: weight bytes change while the file keeps its size and modification
time (a failing disk, some backup restores). The entry must not be used: a warning, a rebuild and
right results, never NaN outputs."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

import tvm_buda
from tests.helpers import assert_matches_golden
from tests.models import golden
from tvm_buda.demo_models import mlp


def _weight_data(cache_dir: Path) -> list[tuple[Path, int, int]]:
    """(file, offset, length) of every float32 tensor's data in the cache's safetensors files."""
    out = []
    for path in sorted(cache_dir.rglob("*.safetensors")):
        raw = path.read_bytes()
        header_len = int.from_bytes(raw[:8], "little")
        header = json.loads(raw[8:8 + header_len])
        for name, info in header.items():
            if name != "__metadata__" and info["dtype"] == "F32":
                begin, end = info["data_offsets"]
                out.append((path, 8 + header_len + begin, end - begin))
    return out


def _rot(path: Path, offset: int, length: int) -> None:
    """Overwrite `length` bytes at `offset` with NaN patterns; size and timestamps stay as they were."""
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(b"\xff" * length)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_rotten_weights_with_size_and_mtime_kept_are_detected(monkeypatch):
    monkeypatch.setenv("PYBUDA_ENABLE_TVM_CACHE", "1")
    torch.manual_seed(0)
    model, x = mlp(), torch.randn(8, 64)
    tvm_buda.compile_model(model, (x,), name="mlp")
    cache_dir = Path("generated_modules/tvm_cache")
    weights = _weight_data(cache_dir)
    assert weights, "the entry stores its weights in safetensors files"
    for path, offset, length in weights:
        _rot(path, offset, length)
    with pytest.warns(RuntimeWarning, match="unusable"):
        compiled = tvm_buda.compile_model(model, (x,), name="mlp")
    out = compiled.run(x)
    assert np.isfinite(out.numpy()).all()
    assert_matches_golden(out, golden(model, x))
