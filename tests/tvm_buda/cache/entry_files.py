"""Reading and damaging cache entries (TT device images) from tests."""

import json
import os
import zipfile
from pathlib import Path

CACHE_DIR = Path("generated_modules/tvm_cache")


def entries(cache_dir: Path = CACHE_DIR) -> list[Path]:
    return sorted(cache_dir.glob("*.tti")) if cache_dir.is_dir() else []


def member_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as zf:
        return zf.namelist()


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def rewrite_member(path: Path, name: str, change) -> None:
    """Rewrite the archive with member `name` replaced by change(its bytes); device.json (and its
    checksums) stay as written."""
    data = members(path)
    data[name] = change(data[name])
    with zipfile.ZipFile(path, "w") as zf:
        for member, content in data.items():
            zf.writestr(member, content)


def float_data(path: Path) -> list[tuple[int, int]]:
    """(offset in the archive file, length) of every float32 tensor's data in its safetensors members."""
    out = []
    with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
        for info in zf.infolist():
            if not info.filename.endswith(".safetensors") or info.compress_type != zipfile.ZIP_STORED:
                continue
            f.seek(info.header_offset + 26)
            name_len, extra_len = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
            begin = info.header_offset + 30 + name_len + extra_len
            f.seek(begin)
            header_len = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(header_len))
            for tensor, spec in header.items():
                if tensor != "__metadata__" and spec["dtype"] == "F32":
                    start, end = spec["data_offsets"]
                    out.append((begin + 8 + header_len + start, end - start))
    return out


def rot(path: Path, ranges: list[tuple[int, int]]) -> None:
    """Overwrite the byte ranges with NaN patterns; size and timestamps stay as they were."""
    st = path.stat()
    with open(path, "r+b") as f:
        for offset, length in ranges:
            f.seek(offset)
            f.write(b"\xff" * length)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
