"""The TTI container: a zip written atomically and read as untrusted input.

Writing: every member is hashed (SHA-256) and listed with its size in `device.json`, which is
written last. Reading never trusts the archive: names are checked before anything is written
(no absolute paths, no `..`, no backslashes or drive letters, no symlinks, no duplicates, only
the image's own top-level folders), sizes are capped (declared and actually decompressed),
every member must be listed in `device.json` with a matching checksum and every listed member
must be present. Files go into a fresh folder, opened exclusively (nothing is overwritten).
Tensor members (`.safetensors`, the bulk of an image) are not written out: they are read
straight from the archive into memory and checked there; a worker thread hashes each chunk
while the next is read (both release the GIL), and every checksum is compared before
`extract_archive` returns. Nothing in the archive is imported or executed here.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

import numpy as np

DEVICE_JSON = "device.json"
CONFIG_JSON = "compile_and_runtime_config.json"
TOP_LEVEL = frozenset({DEVICE_JSON, CONFIG_JSON, "module_files", "tensors", "host", "backend_build_binaries",
                       "placement"})
MAX_MEMBER_BYTES = 8 << 30      # one member (a large model's weights fit)
MAX_TOTAL_BYTES = 32 << 30      # the whole archive, decompressed
MAX_MEMBERS = 10_000
MAX_DEVICE_JSON_BYTES = 64 << 20
_CHUNK = 1 << 20
_HASH_CHUNK = 16 << 20                               # read while the previous chunk is hashed
_STORED_SUFFIXES = (".safetensors", ".so", ".bin")  # already dense: not worth deflating
IN_MEMORY_SUFFIXES = (".safetensors",)               # read into memory on load, never extracted
_ALIGN = 64
_LOCAL_HEADER = struct.Struct("<4s22xHH")            # signature ... file name length, extra field length


class ImageError(ValueError):
    """A TTI that cannot be used; the message names the member and the problem."""


def empty_bytes(size: int) -> np.ndarray:
    """An uninitialised uint8 buffer for a large member (or what is computed from one).

    From torch's allocator, not numpy's: numpy advises the kernel to back large arrays with
    transparent huge pages, and where the kernel then compacts memory on the first touch
    (transparent_hugepage/defrag=madvise, with memory fragmented by the page cache: this machine)
    filling 700 MB that way costs 3-5x filling it in 4 KiB pages (median 1.3 s against 0.3 s)."""
    import torch

    return torch.empty(size, dtype=torch.uint8).numpy()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def write_archive(path, members: dict[str, Path | bytes], device: dict) -> Path:
    """Zip `members` (archive name -> file or bytes) plus `device.json` (= `device` with a
    `members` table of sizes and checksums) to `path`, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = {}
    for name, source in sorted(members.items()):
        check_member_name(name)
        data_size = len(source) if isinstance(source, bytes) else Path(source).stat().st_size
        digest = sha256_bytes(source) if isinstance(source, bytes) else _sha256_file(Path(source))
        table[name] = {"size": data_size, "sha256": digest}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            for name, source in sorted(members.items()):
                compress = zipfile.ZIP_STORED if name.endswith(_STORED_SUFFIXES) else zipfile.ZIP_DEFLATED
                if isinstance(source, bytes):
                    zf.writestr(name, source, compress_type=compress)
                else:
                    zf.write(source, name, compress_type=compress)
            zf.writestr(DEVICE_JSON, json.dumps({**device, "members": table}, indent=1, sort_keys=True),
                        compress_type=zipfile.ZIP_DEFLATED)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def check_member_name(name: str) -> PurePosixPath:
    """The member's relative path, or ImageError when it could land outside the extraction folder."""
    if not name or "\\" in name or "\x00" in name:
        raise ImageError(f"member {name!r}: empty name, backslash or NUL byte in the path")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ImageError(f"member {name!r}: absolute path (members must be relative to the image root)")
    parts = name.split("/")
    if any(p in ("..", ".", "") for p in parts):
        raise ImageError(f"member {name!r}: '..' or '.' in the path would escape the extraction folder")
    if parts[0] not in TOP_LEVEL:
        raise ImageError(f"member {name!r}: unexpected top-level entry (an image holds only {sorted(TOP_LEVEL)})")
    return PurePosixPath(*parts)


def _check_infos(infos: list[zipfile.ZipInfo], max_member_bytes: int, max_total_bytes: int) -> list[zipfile.ZipInfo]:
    if len(infos) > MAX_MEMBERS:
        raise ImageError(f"{len(infos)} members (more than {MAX_MEMBERS}): not an image this tool wrote")
    seen, files, total = set(), [], 0
    for info in infos:
        name = info.filename
        check_member_name(name.rstrip("/") if info.is_dir() else name)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise ImageError(f"member {name!r} is a symbolic link; images never contain links")
        if name in seen:
            raise ImageError(f"member {name!r} appears twice")
        seen.add(name)
        if info.is_dir():
            continue
        if info.file_size > max_member_bytes:
            raise ImageError(f"member {name!r} is {info.file_size:,} bytes, over the {max_member_bytes:,}-byte limit")
        total += info.file_size
        if total > max_total_bytes:
            raise ImageError(f"members add up to more than {max_total_bytes:,} bytes decompressed")
        files.append(info)
    return files


def _read_limited(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    with zf.open(info) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ImageError(f"member {info.filename!r} decompresses to more than {limit:,} bytes")
    return data


def read_device_json(path) -> dict:
    """`device.json` of an archive, after checking the archive's member list (extracts nothing)."""
    with _open_zip(path) as zf:
        infos = {i.filename: i for i in _check_infos(zf.infolist(), MAX_MEMBER_BYTES, MAX_TOTAL_BYTES)}
        return _device_json(zf, infos, path)


def _open_zip(path) -> zipfile.ZipFile:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no TTI image at {path}")
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise ImageError(f"{path} is not a TTI image (not a zip archive: {exc})") from None


def _device_json(zf: zipfile.ZipFile, infos: dict, path) -> dict:
    if DEVICE_JSON not in infos:
        raise ImageError(f"{path}: {DEVICE_JSON} is missing (not a TTI image, or a damaged one)")
    try:
        device = json.loads(_read_limited(zf, infos[DEVICE_JSON], MAX_DEVICE_JSON_BYTES))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImageError(f"{path}: {DEVICE_JSON} is not valid JSON ({exc})") from None
    if not isinstance(device, dict) or not isinstance(device.get("members"), dict):
        raise ImageError(f"{path}: {DEVICE_JSON} has no members table (not written by tvm-buda)")
    return device


def extract_archive(path, check_device=None, max_member_bytes: int = MAX_MEMBER_BYTES,
                    max_total_bytes: int = MAX_TOTAL_BYTES) -> tuple[Path, dict, dict[str, np.ndarray]]:
    """Verify and unpack an image into a fresh folder; returns (folder, device.json, in-memory
    members: name -> 64-byte-aligned uint8 array, for names ending in IN_MEMORY_SUFFIXES).

    `check_device(device_json)` runs before any file is written (format and version checks).
    On any error the folder is removed and ImageError (or FileNotFoundError) is raised."""
    with _open_zip(path) as zf:
        infos = {i.filename: i for i in _check_infos(zf.infolist(), max_member_bytes, max_total_bytes)}
        device = _device_json(zf, infos, path)
        if check_device is not None:
            check_device(device)
        table = device["members"]
        for name in table:
            check_member_name(name)
        unlisted = sorted(set(infos) - set(table) - {DEVICE_JSON})
        if unlisted:
            raise ImageError(f"{path}: member(s) {unlisted} are not listed in {DEVICE_JSON} (added after the image "
                             "was written)")
        missing = sorted(set(table) - set(infos))
        if missing:
            raise ImageError(f"{path}: member(s) {missing} listed in {DEVICE_JSON} are missing")
        root, buffers = Path(tempfile.mkdtemp(prefix="tti-")), {}
        try:
            for name in sorted(table):
                if name.endswith(IN_MEMORY_SUFFIXES):
                    buffers[name] = _read_checked(zf, infos[name], table[name], max_member_bytes)
                else:
                    _extract_one(zf, infos[name], table[name], root, max_member_bytes)
            (root / DEVICE_JSON).write_text(json.dumps(device, sort_keys=True))
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
    return root, device, buffers


def _read_checked(zf: zipfile.ZipFile, info: zipfile.ZipInfo, expected: dict, limit: int) -> np.ndarray:
    """A member's bytes in an aligned buffer, checked against its size and SHA-256 in device.json.
    Stored (uncompressed) members are read straight from the file at their data offset: one
    read, no CRC pass (the SHA-256 is the check) and no copy."""
    name, size = info.filename, expected.get("size")
    if not isinstance(size, int) or size < 0 or size > limit or size != info.file_size:
        raise ImageError(f"member {name!r} is {info.file_size:,} bytes, {DEVICE_JSON} says {size!r} "
                         f"(limit {limit:,}): tampered or damaged")
    if info.flag_bits & 0x1:
        raise ImageError(f"member {name!r} is encrypted; images never are")
    stored = info.compress_type == zipfile.ZIP_STORED and info.compress_size == size
    skew = _safetensors_data_start(zf, info) if stored else 0
    raw = empty_bytes(size + _ALIGN)
    start = -(raw.ctypes.data + skew) % _ALIGN      # tensor data 64-byte aligned: TVM takes it without a copy
    data = raw[start:start + size]
    digest = hashlib.sha256()
    try:
        if stored:
            _read_stored(zf, info, data, digest)
        else:
            with zf.open(info) as src:
                got = src.readinto(memoryview(data)) if size else 0
                if got != size or src.read(1):
                    raise ImageError(f"member {name!r} is not {size:,} bytes as {DEVICE_JSON} says (tampered or damaged)")
            digest.update(data)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ImageError(f"member {name!r} is damaged ({exc})") from None
    if digest.hexdigest() != expected.get("sha256"):
        raise ImageError(f"member {name!r} does not match its checksum in {DEVICE_JSON} (tampered or damaged); "
                         "refusing to load the image")
    return data


def _seek_data(zf: zipfile.ZipFile, info: zipfile.ZipInfo):
    """The archive's file, positioned at the first byte of a stored member's data."""
    f = zf.fp
    f.seek(info.header_offset)
    header = f.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        raise ImageError(f"member {info.filename!r}: truncated local header")
    signature, name_len, extra_len = _LOCAL_HEADER.unpack(header)
    if signature != b"PK\x03\x04":
        raise ImageError(f"member {info.filename!r}: bad local header (not a zip member)")
    f.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
    return f


def _safetensors_data_start(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """Where a safetensors member's tensor data starts (8 + its header length); 0 for other members."""
    if not info.filename.endswith(".safetensors") or info.file_size < 8:
        return 0
    return (8 + int.from_bytes(_seek_data(zf, info).read(8), "little")) % _ALIGN


def _read_stored(zf: zipfile.ZipFile, info: zipfile.ZipInfo, data: np.ndarray, digest) -> None:
    """Read a stored member into `data` chunk by chunk, `digest` hashing each chunk in a worker
    thread while the next is read; returns when every byte is read and hashed."""
    f, view = _seek_data(zf, info), memoryview(data)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tti-sha256") as hasher:
        pending = []
        for begin in range(0, data.size, _HASH_CHUNK):
            chunk = view[begin:begin + _HASH_CHUNK]
            if f.readinto(chunk) != len(chunk):
                raise ImageError(f"member {info.filename!r} is truncated (the archive ends inside it)")
            pending.append(hasher.submit(digest.update, chunk))   # one worker: chunks hashed in order
        for job in pending:
            job.result()


def _extract_one(zf: zipfile.ZipFile, info: zipfile.ZipInfo, expected: dict, root: Path, limit: int) -> None:
    name = info.filename
    target = root.joinpath(*check_member_name(name).parts)
    if not target.resolve().is_relative_to(root.resolve()):
        raise ImageError(f"member {name!r} resolves outside the extraction folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    try:
        with zf.open(info) as src, open(target, "xb") as dst:   # "x": never overwrite anything
            while chunk := src.read(_CHUNK):
                size += len(chunk)
                if size > min(limit, int(expected.get("size", -1))):
                    raise ImageError(f"member {name!r} is larger than {DEVICE_JSON} says (tampered or damaged)")
                digest.update(chunk)
                dst.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ImageError(f"member {name!r} is damaged ({exc})") from None
    if size != expected.get("size") or digest.hexdigest() != expected.get("sha256"):
        raise ImageError(f"member {name!r} does not match its checksum in {DEVICE_JSON} (tampered or damaged); "
                         "refusing to load the image")
