"""The TTI container: a zip written atomically and read as untrusted input.

Writing: every member is hashed (BLAKE3) and listed with its size in `device.json`, which is
written last. Members that are already dense (tensors, libraries) are stored uncompressed with
their data 64-byte aligned in the file (padding in the local header's extra field, as Android's
zipalign does), a safetensors member's tensor data rather than its header.

Reading never trusts the archive: names are checked before anything is written (no absolute
paths, no `..`, no backslashes or drive letters, no symlinks, no duplicates, only the image's
own top-level folders), sizes are capped (declared and actually decompressed), every member must
be listed in `device.json` with a matching checksum and every listed member must be present.
Files go into a fresh folder, opened exclusively (nothing is overwritten). Tensor members (the
bulk of an image) are not written out: the archive is memory-mapped copy-on-write and each is a
view of its bytes in the file (no read, no copy; a member that is compressed or not aligned is
read into an aligned buffer instead), hashed in place. Every checksum is compared before
`extract_archive` returns. Nothing in the archive is imported or executed here.

BLAKE3, not SHA-256: both are cryptographic, and BLAKE3 hashes a BERT-base image (690 MB) in
0.09 s on one core of this project's machines against SHA-256's 0.33 s (with SHA extensions).
A mapped image must be replaced by renaming a new file over it (what `write_archive` does), not
rewritten in place while a process runs it: the kernel takes pages of a truncated file away
from every mapping (SIGBUS on the next read), as for any memory-mapped weights.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

import blake3
import numpy as np

from ..host_buffers import empty_bytes

DEVICE_JSON = "device.json"
CONFIG_JSON = "compile_and_runtime_config.json"
TOP_LEVEL = frozenset({DEVICE_JSON, CONFIG_JSON, "module_files", "tensors", "host", "backend_build_binaries",
                       "placement"})
MAX_MEMBER_BYTES = 8 << 30      # one member (a large model's weights fit)
MAX_TOTAL_BYTES = 32 << 30      # the whole archive, decompressed
MAX_MEMBERS = 10_000
MAX_DEVICE_JSON_BYTES = 64 << 20
CHECKSUM = "blake3"                                  # the key of each member's digest in device.json
_CHUNK = 1 << 20
_THREADED_HASH_BYTES = 64 << 20                      # larger members are hashed on every core
_STORED_SUFFIXES = (".safetensors", ".so", ".bin")  # already dense: not worth deflating
IN_MEMORY_SUFFIXES = (".safetensors",)               # mapped (or read) into memory on load, never extracted
_ALIGN = 64
_LOCAL_HEADER = struct.Struct("<4s22xHH")            # signature ... file name length, extra field length
_PADDING_FIELD = struct.Struct("<HH")                # extra field: id, length (then `length` zero bytes)
_PADDING_ID = 0x7462                                 # "tb": tvm-buda's alignment padding (unregistered id)
_ZIP64_LOCAL_EXTRA = 20                              # zipfile adds it to members over ~4 GB


class ImageError(ValueError):
    """A TTI that cannot be used; the message names the member and the problem."""


def checksum(data) -> str:
    """The BLAKE3 digest (hex) of bytes or any buffer: an image member's checksum."""
    threads = blake3.blake3.AUTO if memoryview(data).nbytes >= _THREADED_HASH_BYTES else 1
    return blake3.blake3(data, max_threads=threads).hexdigest()


class Chunks:
    """A member given as the buffers it is made of, in order (a safetensors file: its header, then
    each tensor's bytes): written into the archive and hashed as they come, never assembled."""

    def __init__(self, parts):
        self.parts = [memoryview(p).cast("B") for p in parts]
        self.size = sum(p.nbytes for p in self.parts)


def write_archive(path, members: dict[str, Path | bytes | memoryview | Chunks], device: dict) -> Path:
    """Zip `members` (archive name -> file, bytes or Chunks) plus `device.json` (= `device` with a
    `members` table of sizes and checksums, computed while writing) to `path`, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for name in members:
        check_member_name(name)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        table = {}
        with zipfile.ZipFile(tmp, "w") as zf:
            for name, source in sorted(members.items()):
                if name.endswith(_STORED_SUFFIXES):
                    table[name] = _write_aligned(zf, name, source)
                    continue
                data = b"".join(_pieces(source)[2])
                zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
                table[name] = {"size": len(data), CHECKSUM: checksum(data)}
            zf.writestr(DEVICE_JSON, json.dumps({**device, "members": table}, indent=1, sort_keys=True),
                        compress_type=zipfile.ZIP_DEFLATED)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _pieces(source: Path | bytes | memoryview | Chunks):
    """(size, its first 8 bytes, the member's bytes as an iterable of buffers)."""
    if isinstance(source, Chunks):
        return source.size, bytes(source.parts[0][:8]) if source.parts else b"", source.parts
    if isinstance(source, (bytes, bytearray, memoryview)):
        view = memoryview(source).cast("B")
        return view.nbytes, bytes(view[:8]), [view]
    path = Path(source)

    def read():
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                yield chunk

    with open(path, "rb") as f:
        head = f.read(8)
    return path.stat().st_size, head, read()


def _write_aligned(zf: zipfile.ZipFile, name: str, source: Path | bytes | Chunks) -> dict:
    """Store a member uncompressed with its data (a safetensors file's tensor data) starting at a
    64-byte boundary of the archive, so a mapped image hands out aligned arrays; returns its
    device.json entry (size and checksum, hashed as it is written)."""
    size, head, pieces = _pieces(source)
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type, info.file_size = zipfile.ZIP_STORED, size
    info.external_attr = 0o644 << 16
    skew = 8 + int.from_bytes(head, "little") if name.endswith(".safetensors") and len(head) == 8 else 0
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT          # zipfile's own rule for a zip64 local field
    header = _LOCAL_HEADER.size + len(name.encode("utf-8")) + _PADDING_FIELD.size + zip64 * _ZIP64_LOCAL_EXTRA
    padding = -(zf.fp.tell() + header + skew) % _ALIGN
    info.extra = _PADDING_FIELD.pack(_PADDING_ID, padding) + bytes(padding)
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    with zf.open(info, "w") as dst:
        for piece in pieces:
            dst.write(piece)
            hasher.update(piece)
    return {"size": size, CHECKSUM: hasher.hexdigest()}


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
    try:
        with zf.open(info) as f:
            data = f.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ImageError(f"member {info.filename!r} is damaged ({exc})") from None
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
                    max_total_bytes: int = MAX_TOTAL_BYTES, map_file: bool = True
                    ) -> tuple[Path, dict, dict[str, np.ndarray]]:
    """Verify and unpack an image into a fresh folder; returns (folder, device.json, in-memory
    members: name -> 64-byte-aligned uint8 array, for names ending in IN_MEMORY_SUFFIXES).

    map_file: tensor members are views of the archive mapped copy-on-write (writes to them stay
    in this process); False reads them into memory. `check_device(device_json)` runs before any
    file is written (format and version checks). On any error the folder is removed and
    ImageError (or FileNotFoundError) is raised."""
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
            mapped = _map(zf) if map_file and any(n.endswith(IN_MEMORY_SUFFIXES) for n in table) else None
            for name in sorted(table):
                if name.endswith(IN_MEMORY_SUFFIXES):
                    buffers[name] = _in_memory(zf, infos[name], table[name], max_member_bytes, mapped)
                else:
                    _extract_one(zf, infos[name], table[name], root, max_member_bytes)
            (root / DEVICE_JSON).write_text(json.dumps(device, sort_keys=True))
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
    return root, device, buffers


def _map(zf: zipfile.ZipFile) -> np.ndarray | None:
    """The whole archive file as a copy-on-write uint8 array (pages are read when first touched),
    or None where the file cannot be mapped (some network and FUSE file systems): members are
    then read."""
    f = zf.fp
    try:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None
        return np.frombuffer(mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY), dtype=np.uint8)
    except (OSError, ValueError):
        return None


def _in_memory(zf: zipfile.ZipFile, info: zipfile.ZipInfo, expected: dict, limit: int,
               mapped: np.ndarray | None) -> np.ndarray:
    """A tensor member's bytes, checked against its size and checksum in device.json: a view of
    the mapped archive when it is stored uncompressed at an aligned offset, else an aligned copy."""
    name, size = info.filename, expected.get("size")
    if not isinstance(size, int) or size < 0 or size > limit or size != info.file_size:
        raise ImageError(f"member {name!r} is {info.file_size:,} bytes, {DEVICE_JSON} says {size!r} "
                         f"(limit {limit:,}): tampered or damaged")
    if info.flag_bits & 0x1:
        raise ImageError(f"member {name!r} is encrypted; images never are")
    stored = info.compress_type == zipfile.ZIP_STORED and info.compress_size == size
    data = None
    if stored:
        begin = _data_offset(zf, info)
        if begin + size > os.fstat(zf.fp.fileno()).st_size:
            raise ImageError(f"member {name!r} is truncated (the archive ends inside it)")
        skew = _safetensors_data_start(zf, info, begin)
        if mapped is not None and (begin + skew) % _ALIGN == 0:
            data = mapped[begin:begin + size]
        else:
            data = _aligned(size, skew)
            zf.fp.seek(begin)
            if size and zf.fp.readinto(memoryview(data)) != size:
                raise ImageError(f"member {name!r} is truncated (the archive ends inside it)")
    else:
        data = _aligned(size, 0)
        try:
            with zf.open(info) as src:
                got = src.readinto(memoryview(data)) if size else 0
                if got != size or src.read(1):
                    raise ImageError(f"member {name!r} is not {size:,} bytes as {DEVICE_JSON} says (tampered or damaged)")
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise ImageError(f"member {name!r} is damaged ({exc})") from None
    if checksum(data) != expected.get(CHECKSUM):
        raise ImageError(f"member {name!r} does not match its checksum in {DEVICE_JSON} (tampered or damaged); "
                         "refusing to load the image")
    return data


def _aligned(size: int, skew: int) -> np.ndarray:
    """An uninitialised buffer of `size` bytes whose byte `skew` sits at a 64-byte boundary."""
    raw = empty_bytes(size + _ALIGN)
    start = -(raw.ctypes.data + skew) % _ALIGN
    return raw[start:start + size]


def _data_offset(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """Where a member's data starts in the archive file (after its local header)."""
    f = zf.fp
    f.seek(info.header_offset)
    header = f.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        raise ImageError(f"member {info.filename!r}: truncated local header")
    signature, name_len, extra_len = _LOCAL_HEADER.unpack(header)
    if signature != b"PK\x03\x04":
        raise ImageError(f"member {info.filename!r}: bad local header (not a zip member)")
    return info.header_offset + _LOCAL_HEADER.size + name_len + extra_len


def _safetensors_data_start(zf: zipfile.ZipFile, info: zipfile.ZipInfo, begin: int) -> int:
    """Where a safetensors member (its data at `begin` in the archive) has its tensor data
    (8 + its header length), modulo the alignment; 0 for other members."""
    if not info.filename.endswith(".safetensors") or info.file_size < 8:
        return 0
    zf.fp.seek(begin)
    return (8 + int.from_bytes(zf.fp.read(8), "little")) % _ALIGN


def _extract_one(zf: zipfile.ZipFile, info: zipfile.ZipInfo, expected: dict, root: Path, limit: int) -> None:
    name = info.filename
    target = root.joinpath(*check_member_name(name).parts)
    if not target.resolve().is_relative_to(root.resolve()):
        raise ImageError(f"member {name!r} resolves outside the extraction folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    hasher, size = blake3.blake3(), 0
    try:
        with zf.open(info) as src, open(target, "xb") as dst:   # "x": never overwrite anything
            while chunk := src.read(_CHUNK):
                size += len(chunk)
                if size > min(limit, int(expected.get("size", -1))):
                    raise ImageError(f"member {name!r} is larger than {DEVICE_JSON} says (tampered or damaged)")
                hasher.update(chunk)
                dst.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ImageError(f"member {name!r} is damaged ({exc})") from None
    if size != expected.get("size") or hasher.hexdigest() != expected.get(CHECKSUM):
        raise ImageError(f"member {name!r} does not match its checksum in {DEVICE_JSON} (tampered or damaged); "
                         "refusing to load the image")
