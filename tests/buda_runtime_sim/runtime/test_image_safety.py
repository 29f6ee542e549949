"""A TTI is untrusted input: hand-crafted archives that try to escape, lie or tamper are refused
with a clear error before anything is written outside a fresh folder or executed."""

import json
import tempfile
import zipfile
from pathlib import Path

import pytest

from buda_runtime_sim.runtime.image_archive import DEVICE_JSON, ImageError, checksum, write_archive
from buda_runtime_sim.runtime.images import IMAGE_FORMAT, TTDeviceImage, tool_versions

# Running this module would create a marker file: it must never run on load.
PAYLOAD = b"open(__file__ + '.executed', 'w').write('ran')\n"
MODULE = "module_files/m/m_0.py"


@pytest.fixture(autouse=True)
def _private_tempdir(tmp_path, monkeypatch):
    """Extraction folders land in tmp_path/extract, so tests can see what was left behind."""
    (tmp_path / "extract").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "extract"))


def _device(members: dict[str, bytes], **overrides) -> dict:
    device = {"image_format": IMAGE_FORMAT, "versions": tool_versions(), "training": False,
              "device": {"name": "tt0", "arch": "grayskull", "devtype": "golden", "chip_ids": [0],
                         "device_config": "gs_e150", "harvested_rows": [], "grid_size": [10, 12]},
              "models": [{"name": "m", "inputs": [{"name": "x", "shape": [1, 32], "dtype": "float32"}]}],
              "members": {n: {"size": len(d), "blake3": checksum(d)} for n, d in members.items()}}
    device.update(overrides)
    return device


def _zip(path: Path, entries: list, device: dict | None) -> Path:
    """entries: (ZipInfo or name, bytes); device.json is added unless `device` is None."""
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data)
        if device is not None:
            zf.writestr(DEVICE_JSON, json.dumps(device))
    return path


def _good_members() -> dict[str, bytes]:
    return {MODULE: PAYLOAD, "tensors/m/m_0.safetensors": b"\x08" + b"\x00" * 7 + b"{}      "}


def _left_behind(tmp_path) -> list:
    return sorted(p.name for p in (tmp_path / "extract").iterdir())


def _assert_refused(tmp_path, path, match, **kwargs):
    with pytest.raises(ImageError, match=match):
        TTDeviceImage.load_from_disk(path, **kwargs)
    assert _left_behind(tmp_path) == [], "a refused image left its extraction folder behind"
    assert not list(tmp_path.rglob("*.executed")), "code from a refused image was executed"


def test_a_well_formed_image_unpacks_into_a_fresh_folder(tmp_path):
    members = _good_members()
    path = write_archive(tmp_path / "ok.tti", {n: d for n, d in members.items()}, _device(members))
    img = TTDeviceImage.load_from_disk(path)
    assert img.root.parent == tmp_path / "extract" and (img.root / MODULE).read_bytes() == PAYLOAD
    assert img.get_input_shapes() == [[1, 32]]
    assert not list(tmp_path.rglob("*.executed"))  # loading from disk executes nothing
    img.close()
    assert _left_behind(tmp_path) == []


@pytest.mark.parametrize("name", ["module_files/../../evil.py", "../evil.py", "module_files/./x.py"])
def test_zip_slip_is_refused(tmp_path, name):
    path = _zip(tmp_path / "slip.tti", [(name, PAYLOAD)], _device({name: PAYLOAD}))
    _assert_refused(tmp_path, path, r"escape the extraction folder")
    assert not (tmp_path / "evil.py").exists() and not (tmp_path.parent / "evil.py").exists()


@pytest.mark.parametrize("name", ["/tmp/evil.py", "C:/evil.py", "module_files\\..\\evil.py"])
def test_absolute_and_windows_paths_are_refused(tmp_path, name):
    path = _zip(tmp_path / "abs.tti", [(name, PAYLOAD)], _device({}))
    _assert_refused(tmp_path, path, r"absolute path|backslash")


def test_symlinks_are_refused(tmp_path):
    link = zipfile.ZipInfo("module_files/m/link.py")
    link.external_attr = (0o120777 << 16)
    path = _zip(tmp_path / "link.tti", [(link, b"/etc/passwd")], _device({"module_files/m/link.py": b"/etc/passwd"}))
    _assert_refused(tmp_path, path, r"symbolic link")


def test_unknown_top_level_entries_are_refused(tmp_path):
    path = _zip(tmp_path / "top.tti", [("setup.py", PAYLOAD)], _device({"setup.py": PAYLOAD}))
    _assert_refused(tmp_path, path, r"unexpected top-level entry")


def test_oversized_members_are_refused(tmp_path):
    members = _good_members()
    path = write_archive(tmp_path / "big.tti", members, _device(members))
    _assert_refused(tmp_path, path, r"over the 16-byte limit", max_member_bytes=16)
    _assert_refused(tmp_path, path, r"more than 40 bytes decompressed", max_total_bytes=40)


def test_a_member_larger_than_device_json_says_is_refused(tmp_path):
    big = PAYLOAD * 1000
    device = _device({MODULE: PAYLOAD})  # claims the small size
    path = _zip(tmp_path / "bomb.tti", [(MODULE, big)], device)
    _assert_refused(tmp_path, path, r"larger than device.json says")


def test_missing_members_are_refused(tmp_path):
    members = _good_members()
    path = _zip(tmp_path / "missing.tti", [(MODULE, PAYLOAD)], _device(members))
    _assert_refused(tmp_path, path, r"tensors/m/m_0.safetensors.*missing")


def test_unlisted_members_are_refused(tmp_path):
    members = _good_members()
    extra = [("module_files/m/extra.py", PAYLOAD)]
    path = _zip(tmp_path / "extra.tti", [*members.items(), *extra], _device(members))
    _assert_refused(tmp_path, path, r"extra.py.*not listed")


def test_tampered_members_are_refused_and_never_run(tmp_path):
    members = _good_members()
    tampered = {**members, MODULE: PAYLOAD.replace(b"'ran'", b"'RAN'")}  # same size, other bytes
    path = _zip(tmp_path / "tampered.tti", list(tampered.items()), _device(members))
    _assert_refused(tmp_path, path, r"m_0.py.*does not match its checksum")


def test_images_from_other_tool_versions_are_refused(tmp_path):
    members = _good_members()
    versions = {**tool_versions(), "apache-tvm": "0.19.0"}
    path = write_archive(tmp_path / "old.tti", members, _device(members, versions=versions))
    _assert_refused(tmp_path, path, r"other tool versions: apache-tvm 0.19.0")
    path = write_archive(tmp_path / "fmt.tti", members, _device(members, image_format=99))
    _assert_refused(tmp_path, path, r"image format 99 .* another version of tvm-buda")


def test_not_an_image(tmp_path):
    (tmp_path / "junk.tti").write_bytes(b"not a zip at all")
    _assert_refused(tmp_path, tmp_path / "junk.tti", r"not a zip archive")
    path = _zip(tmp_path / "nodevice.tti", [(MODULE, PAYLOAD)], None)
    _assert_refused(tmp_path, path, r"device.json is missing")
    with pytest.raises(FileNotFoundError, match="no TTI image"):
        TTDeviceImage.load_from_disk(tmp_path / "absent.tti")


def test_duplicate_members_are_refused(tmp_path):
    members = _good_members()
    with pytest.warns(UserWarning, match="Duplicate name"):  # zipfile warns while we craft it
        path = _zip(tmp_path / "dup.tti", [*members.items(), (MODULE, PAYLOAD)], _device(members))
    _assert_refused(tmp_path, path, r"appears twice")


def test_device_json_cannot_point_outside_the_checked_members(tmp_path):
    members = _good_members()
    path = write_archive(tmp_path / "ok.tti", members, _device(members))
    img = TTDeviceImage.load_from_disk(path)
    with pytest.raises(ImageError, match="not a checked member"):
        img.member("../../etc/passwd")


TENSORS = "tensors/m/m_0.safetensors"
STATE = "tensors/m/m_0.device_state.safetensors"


def _safetensors(header: dict, body: bytes) -> bytes:
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + body


@pytest.mark.parametrize("compress", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("member", [TENSORS, STATE])
def test_tampered_tensor_members_are_refused(tmp_path, compress, member):
    good = _safetensors({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\x00" * 8)
    members = {**_good_members(), member: good}
    tampered = {**members, member: good[:-1] + b"\x01"}
    path = tmp_path / "tampered.tti"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in tampered.items():
            zf.writestr(name, data, compress_type=compress)
        zf.writestr(DEVICE_JSON, json.dumps(_device(members)))
    _assert_refused(tmp_path, path, rf"{member}.*does not match its checksum")
    longer = {**members, member: good + b"\x00" * 8}
    path = _zip(tmp_path / "longer.tti", list(longer.items()), _device(members))
    _assert_refused(tmp_path, path, rf"{member}.*device.json says.*tampered or damaged")


def test_tensor_members_are_read_in_memory_never_written_out(tmp_path):
    data = _safetensors({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}},
                        b"\x00\x00\x80\x3f" * 4)
    members = {**_good_members(), STATE: data}
    img = TTDeviceImage.load_from_disk(write_archive(tmp_path / "ok.tti", members, _device(members)))
    assert not list(img.root.rglob("*.safetensors"))
    assert img.tensors(STATE)["w"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(ImageError, match="held in memory"):
        img.member(STATE)
    with pytest.raises(ImageError, match="not a checked tensor member"):
        img.tensors(MODULE)


@pytest.mark.parametrize("header, why", [
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, "does not fit bytes"),        # past the end
    ({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, "does not fit bytes"),         # shape vs bytes
    ({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, "does not fit bytes"),
    ({"w": {"dtype": "O", "shape": [1], "data_offsets": [0, 8]}}, "no known dtype"),               # no objects
    ([1, 2], "not a table"),
])
def test_malformed_tensor_members_are_a_clear_error(tmp_path, header, why):
    members = {**_good_members(), STATE: _safetensors(header, b"\x00" * 8)}
    img = TTDeviceImage.load_from_disk(write_archive(tmp_path / "bad.tti", members, _device(members)))
    with pytest.raises(ImageError, match=f"{STATE}: not a valid safetensors file: .*{why}"):
        img.tensors(STATE)
