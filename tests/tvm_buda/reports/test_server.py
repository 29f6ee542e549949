"""The report server: bound to 127.0.0.1, serves the folder, refuses anything outside it."""

import http.client
import os

import pytest

from tvm_buda.reports.server import make_server, serve_in_background


def _get(url_host: str, port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(url_host, port, timeout=10)
    conn.request("GET", path)   # sent as is: no client-side normalisation of ".."
    response = conn.getresponse()
    return response.status, response.read()


def test_serves_the_report_and_refuses_paths_outside(report_root, tmp_path):
    secret = report_root.parent / "secret.txt"
    secret.write_text("do not serve")
    os.symlink(secret, report_root / "link.txt")
    server, url = serve_in_background(report_root)
    try:
        host, port = server.server_address
        assert host == "127.0.0.1"
        status, body = _get(host, port, "/index.html")
        assert status == 200 and b"Reportify" in body
        for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/models/../../secret.txt", "/link.txt"):
            status, body = _get(host, port, path)
            assert status == 404 and b"do not serve" not in body, path
    finally:
        server.shutdown()
        server.server_close()
        (report_root / "link.txt").unlink()


def test_a_folder_without_a_report_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="PYBUDA_REPORTIFY=1"):
        make_server(tmp_path)
