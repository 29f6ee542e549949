"""Large tensor members are read in chunks and hashed in a worker thread while the next chunk is
read: every byte still counts, wherever a change falls, and the buffer holds exactly the member."""

import hashlib
import zipfile

import numpy as np
import pytest

from buda_runtime_sim.runtime import image_archive
from buda_runtime_sim.runtime.image_archive import ImageError, extract_archive, write_archive
from buda_runtime_sim.runtime.images import IMAGE_FORMAT, tool_versions

MEMBER = "tensors/m/m_0.safetensors"


def _safetensors(n_floats: int) -> bytes:
    header = b'{"w":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}' % (n_floats, 4 * n_floats)
    header += b" " * (-len(header) % 8)
    body = np.random.default_rng(0).standard_normal(n_floats, dtype=np.float32).tobytes()
    return len(header).to_bytes(8, "little") + header + body


def _image(path, data: bytes, declared: bytes | None = None):
    device = {"image_format": IMAGE_FORMAT, "versions": tool_versions(), "models": []}
    write_archive(path, {MEMBER: declared if declared is not None else data}, device)
    if declared is not None:          # swap in other bytes of the same size behind device.json's back
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo(MEMBER)
        with open(path, "r+b") as f:
            f.seek(info.header_offset + 30 + len(info.filename) + len(info.extra))
            f.write(data)
    return path


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(image_archive, "_HASH_CHUNK", 4096)     # many chunks without a large file


def test_a_member_read_in_chunks_is_exact_and_aligned(tmp_path, small_chunks):
    data = _safetensors(10_000)                                  # 40 kB: ten chunks and a tail
    root, _, buffers = extract_archive(_image(tmp_path / "ok.tti", data))
    got = buffers[MEMBER]
    assert got.tobytes() == data and hashlib.sha256(got).hexdigest() == hashlib.sha256(data).hexdigest()
    assert (got.ctypes.data + len(data) - 40_000) % 64 == 0       # tensor data 64-byte aligned


@pytest.mark.parametrize("where", [100, 4096, 4097, 25_000, -1])   # first, boundary, middle and last chunk
def test_a_change_in_any_chunk_is_refused(tmp_path, small_chunks, where):
    good = _safetensors(10_000)
    bad = bytearray(good)
    bad[where] ^= 1
    with pytest.raises(ImageError, match=f"{MEMBER}.*does not match its checksum"):
        extract_archive(_image(tmp_path / "bad.tti", bytes(bad), declared=good))
