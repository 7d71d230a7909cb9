"""Artifact zips are fetched behind GitHub's redirect without handing the token on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from pydantic import SecretStr

from tusk.github.gateway import Gateway, GitHubError


class Recorder(BaseHTTPRequestHandler):
    """/zip redirects to /blob (like GitHub to its storage); every request is recorded."""

    seen: ClassVar[list[tuple[str, str | None]]] = []

    def do_GET(self) -> None:
        Recorder.seen.append((self.path, self.headers.get("Authorization")))
        if self.path.startswith("/zip"):
            self.send_response(302)
            self.send_header("Location", "/blob?sig=abc")
            self.end_headers()
        elif self.path.startswith("/gone"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")
        else:
            body = b"PK\x03\x04 zip bytes \xff\x00"
            self.send_response(200)
            self.send_header("Content-Type", "application/zip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def test_download_returns_exact_bytes_and_keeps_the_token_from_the_storage_url(server):
    gateway = Gateway(api_url=server, token=SecretStr("sekrit"), token_name="agent")
    assert gateway.download("/zip") == b"PK\x03\x04 zip bytes \xff\x00"
    assert Recorder.seen == [("/zip", "Bearer sekrit"), ("/blob?sig=abc", None)]


def test_download_without_a_redirect_is_an_error(server):
    gateway = Gateway(api_url=server, token=SecretStr("sekrit"), token_name="agent")
    with pytest.raises(GitHubError, match="expected a redirect"):
        gateway.download("/gone")
