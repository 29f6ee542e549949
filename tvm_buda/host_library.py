"""Saving and loading the host part (TVM's Relax VM executable as a shared library) without
TVM's leftover debugging output.

TVM 0.27's VM executable logs `Warning: Scope Saving:` / `Scope Loaded:` on stderr for every
entry of its memory-scope table on each save and load (src/runtime/vm/executable.cc,
SaveMemoryScopeSection / LoadMemoryScopeSection): three lines on every cache hit, image save
and image load, which tell a user nothing. Those lines are dropped here; anything else written
to stderr meanwhile (by TVM or another thread) is passed on once the call returns.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading

_SCOPE_LINE = re.compile(rb"executable\.cc:\d+: Warning: Scope (Saving|Loaded):")
_LOCK = threading.Lock()        # fd 2 is process-wide: one redirection at a time


@contextlib.contextmanager
def _without_scope_warnings():
    with _LOCK, tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            kept = b"".join(line for line in capture.read().splitlines(keepends=True) if not _SCOPE_LINE.search(line))
            if kept:
                os.write(2, kept)


def load_host_library(path):
    """The exported library as a runtime module (TVM's runtime alone: host_vm.py), quietly."""
    from .host_vm import load_module

    with _without_scope_warnings():
        return load_module(path)


def export_host_library(executable, path) -> None:
    """executable.export_library(path), quietly."""
    with _without_scope_warnings():
        executable.export_library(str(path))
