"""Tensor members are views of the mapped archive (or, with map_file=False or when a member is
not stored aligned, aligned copies): every byte still counts toward the checksum, wherever a
change falls, the buffer holds exactly the member, and writes to it never reach the file."""

import zipfile

import blake3
import numpy as np
import pytest

from buda_runtime_sim.runtime.image_archive import CHECKSUM, ImageError, extract_archive, write_archive
from buda_runtime_sim.runtime.images import IMAGE_FORMAT, tool_versions

MEMBER = "tensors/m/m_0.safetensors"


def _safetensors(n_floats: int, header_pad: int = 0) -> bytes:
    header = b'{"w":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}' % (n_floats, 4 * n_floats)
    header += b" " * (-len(header) % 8 + header_pad)
    body = np.random.default_rng(0).standard_normal(n_floats, dtype=np.float32).tobytes()
    return len(header).to_bytes(8, "little") + header + body


def _image(path, data: bytes, declared: bytes | None = None, members: dict | None = None):
    device = {"image_format": IMAGE_FORMAT, "versions": tool_versions(), "models": []}
    write_archive(path, {**(members or {}), MEMBER: declared if declared is not None else data}, device)
    if declared is not None:          # swap in other bytes of the same size behind device.json's back
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo(MEMBER)
        with open(path, "r+b") as f:
            f.seek(info.header_offset + 30 + len(info.filename) + len(info.extra))
            f.write(data)
    return path


def _data_offset(path, name=MEMBER) -> int:
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(name)
    with open(path, "rb") as f:
        f.seek(info.header_offset + 26)
        name_len, extra_len = np.frombuffer(f.read(4), "<u2")
    return info.header_offset + 30 + int(name_len) + int(extra_len)


@pytest.mark.parametrize("header_pad", [0, 8, 24, 56])     # the tensor data starts anywhere mod 64
@pytest.mark.parametrize("map_file", [True, False])
def test_a_member_is_exact_and_its_tensor_data_aligned(tmp_path, header_pad, map_file):
    data = _safetensors(10_000, header_pad)
    before = (tmp_path / "x.tti")
    members = {"module_files/m/m_0.py": b"x = 1\n", "host/m.so": b"\x7fELF" + bytes(100)}  # shift the offsets
    path = _image(before, data, members=members)
    tensor_start = len(data) - 40_000
    assert (_data_offset(path) + tensor_start) % 64 == 0      # written aligned in the file itself
    _, device, buffers = extract_archive(path, map_file=map_file)
    got = buffers[MEMBER]
    assert got.tobytes() == data and device["members"][MEMBER][CHECKSUM] == blake3.blake3(data).hexdigest()
    assert (got.ctypes.data + tensor_start) % 64 == 0          # so TVM and torch take it without a copy
    assert zipfile.ZipFile(path).testzip() is None             # still a valid zip (CRCs, extra fields)


def test_writes_to_a_mapped_member_stay_in_the_process(tmp_path):
    data = _safetensors(1000)
    path = _image(tmp_path / "x.tti", data)
    file_before = path.read_bytes()
    _, _, buffers = extract_archive(path)
    buffers[MEMBER][100:200] = 7                              # copy-on-write: the file is untouched
    assert path.read_bytes() == file_before
    _, _, again = extract_archive(path)
    assert again[MEMBER].tobytes() == data


def test_an_unaligned_stored_member_is_copied_aligned(tmp_path):
    """An archive written elsewhere (plain zipfile: no alignment padding) still loads, as a copy."""
    data = _safetensors(1000, header_pad=8)
    path = tmp_path / "plain.tti"
    device = {"image_format": IMAGE_FORMAT, "versions": tool_versions(), "models": [],
              "members": {MEMBER: {"size": len(data), CHECKSUM: blake3.blake3(data).hexdigest()}}}
    import json
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("device.json", json.dumps(device))
        zf.writestr(MEMBER, data)                               # stored, at whatever offset
    assert (_data_offset(path) + len(data) - 4000) % 64 != 0
    _, _, buffers = extract_archive(path)
    got = buffers[MEMBER]
    assert got.tobytes() == data and (got.ctypes.data + len(data) - 4000) % 64 == 0


@pytest.mark.parametrize("where", [0, 100, 4096, 25_000, -1])   # header, data, last byte
@pytest.mark.parametrize("map_file", [True, False])
def test_a_change_anywhere_is_refused(tmp_path, where, map_file):
    good = _safetensors(10_000)
    bad = bytearray(good)
    bad[where] ^= 1
    with pytest.raises(ImageError, match=f"{MEMBER}.*does not match its checksum"):
        extract_archive(_image(tmp_path / "bad.tti", bytes(bad), declared=good), map_file=map_file)


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_a_cut_archive_is_refused(tmp_path, keep):
    """Half a member gone with the central directory kept: every offset after the cut is wrong."""
    data = _safetensors(10_000)
    path = _image(tmp_path / "t.tti", data)
    raw = path.read_bytes()
    cut = _data_offset(path) + int(len(data) * keep)
    with zipfile.ZipFile(path) as zf:
        central = zf.start_dir
    path.write_bytes(raw[:cut] + raw[central:])
    with pytest.raises(ImageError, match="truncated|not a zip|damaged|checksum|bad local header"):
        extract_archive(path)


def test_a_file_that_cannot_be_mapped_is_read(tmp_path, monkeypatch):
    from buda_runtime_sim.runtime import image_archive

    def refuse(*args, **kwargs):
        raise OSError(19, "No such device")          # what mmap says on a file system without it

    monkeypatch.setattr(image_archive.mmap, "mmap", refuse)
    data = _safetensors(1000)
    _, _, buffers = extract_archive(_image(tmp_path / "x.tti", data))
    assert buffers[MEMBER].tobytes() == data and (buffers[MEMBER].ctypes.data + len(data) - 4000) % 64 == 0
