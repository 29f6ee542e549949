"""The results directory: one `jobs/<key>/result.json` per finished job, written atomically.

Several workers, machines and drivers may write into one directory (a shared filesystem): each
result is written to a temporary name and renamed, so a reader sees a whole file or none, and a
killed writer leaves at most a stray temporary file, never a half result.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path


class ResultStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def job_dir(self, key: str) -> Path:
        return self.root / "jobs" / key

    def result_path(self, key: str) -> Path:
        return self.job_dir(key) / "result.json"

    def read(self, key: str) -> dict | None:
        """The finished result, or None (missing, or unreadable: the job runs again)."""
        try:
            row = json.loads(self.result_path(key).read_text())
        except (OSError, ValueError):
            return None
        return row if isinstance(row, dict) and row.get("key") == key and "status" in row else None

    def write(self, key: str, row: dict) -> Path:
        path = self.result_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(row, indent=1, sort_keys=True))
        return path


def write_atomically(path: Path, text: str) -> None:
    """Temporary file in the same folder, flushed to disk, then renamed over `path`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
