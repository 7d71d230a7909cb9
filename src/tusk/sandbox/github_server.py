"""The local GitHub: an HTTP server on 127.0.0.1 held to GitHub's API descriptions.

This module is the socket edge: ``start_server`` runs one ``SandboxApp``
(``tusk.sandbox.github_app``, the whole request pipeline, free of sockets) on a
background thread; ``serve_forever`` is ``tusk sandbox github``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tusk.sandbox.github_access import ADMIN_SECRET_ENV
from tusk.sandbox.github_app import SandboxApp
from tusk.sandbox.http_body import read_body
from tusk.sandbox.outcomes import DROP, Outcome, json_outcome
from tusk.sandbox.scenario import read_scenario_file


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tusk-sandbox-github"
    app: SandboxApp

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle's
        # algorithm and delayed ACKs add ~40 ms to every keep-alive response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the journal is the log

    def date_time_string(self, timestamp: float | None = None) -> str:
        # GitHub's Date header is GitHub's clock; a scenario with a fixed "now" keeps its own.
        if timestamp is not None:
            return super().date_time_string(timestamp)
        return format_datetime(self.app.world.clock.now(), usegmt=True)

    def _read_body(self) -> bytes:
        return read_body(self.headers, self.rfile)

    def _serve(self) -> None:
        body = self._read_body()
        headers = {k: v for k, v in self.headers.items()}
        try:
            outcome = self.app.handle(self.command, self.path, headers, body)
        except Exception as error:
            import traceback

            traceback.print_exc(file=sys.stderr)
            outcome = json_outcome(500, {"message": f"sandbox internal error: {error!r}"})
        if outcome is DROP:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        assert isinstance(outcome, Outcome)
        self.send_response(outcome.status)
        for name, value in outcome.headers.items():
            if name.lower() not in ("content-length", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(outcome.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(outcome.body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


@dataclass
class RunningServer:
    app: SandboxApp
    server: _Server
    thread: threading.Thread

    @property
    def url(self) -> str:
        return self.app.base

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        self.app.git.cleanup()


def start_server(
    *,
    port: int = 0,
    scenario: Mapping[str, Any] | str | None = None,
    strict: bool = True,
    admin_secret: str | None = None,
) -> RunningServer:
    """Start the local GitHub on a background thread (``port=0`` picks a free port).
    ``running.app.admin_secret`` opens its admin API (one is made up when not given)."""
    app = SandboxApp(strict=strict, admin_secret=admin_secret)
    handler = type("Handler", (_RequestHandler,), {"app": app})
    server = _Server(("127.0.0.1", port), handler)
    app.base = f"http://127.0.0.1:{server.server_address[1]}"
    if scenario is not None:
        app.load(scenario)
    thread = threading.Thread(target=server.serve_forever, name="sandbox-github", daemon=True)
    thread.start()
    return RunningServer(app, server, thread)


def shipped_or_path(scenario: str) -> str:
    """``scenario`` as a path, or the file of the scenario Tusk ships under that name."""
    if Path(scenario).exists() or "/" in scenario:
        return scenario
    from importlib import resources

    shipped = resources.files("tusk.sandbox.scenarios").joinpath(f"{scenario}.yml")
    return str(shipped) if shipped.is_file() else scenario


def serve_forever(*, port: int = 0, scenario: str | None = None, strict: bool = True) -> int:
    """``tusk sandbox github``: print the base URL, then serve until SIGTERM/SIGINT."""
    data = read_scenario_file(shipped_or_path(scenario)) if scenario else None
    running = start_server(
        port=port, scenario=data, strict=strict, admin_secret=os.environ.get(ADMIN_SECRET_ENV)
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(running.url, flush=True)
    try:
        stop.wait()
    finally:
        running.stop()
    return 0
