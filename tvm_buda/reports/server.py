"""Serving a report folder on 127.0.0.1 with the standard library, never anything outside it."""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path


class ReportHandler(http.server.SimpleHTTPRequestHandler):
    """Static files of one folder; paths that resolve outside it (`..`, symlinks) are refused."""

    def translate_path(self, path: str) -> str:
        root = Path(self.directory).resolve()
        target = Path(super().translate_path(path)).resolve()
        if target != root and root not in target.parents:
            return str(root / ".refused")  # does not exist: a 404, and nothing outside is ever opened
        return str(target)

    def log_message(self, format, *args):  # noqa: A002 - quiet unless asked
        if os.environ.get("REPORTIFY_VERBOSE"):
            super().log_message(format, *args)


def make_server(directory, port: int = 0) -> http.server.ThreadingHTTPServer:
    """A server bound to 127.0.0.1 only (port 0: any free port)."""
    directory = Path(directory)
    if not (directory / "index.html").is_file():
        raise FileNotFoundError(f"{directory} holds no Reportify report (no index.html); compile with "
                                "PYBUDA_REPORTIFY=1 or run `tvm-buda report MODEL --html` first")
    handler = functools.partial(ReportHandler, directory=str(directory.resolve()))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def serve_in_background(directory, port: int = 0):
    """(server, url) with the server running in a daemon thread; call server.shutdown() to stop."""
    server = make_server(directory, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"
