"""Serving the MCP server over streamable HTTP on 127.0.0.1, behind the run's bearer secret.

``bind`` takes the port first, so the URL is known before serving; ``serve``
runs uvicorn until the process is stopped; ``start_in_thread`` serves from a
background thread (tests, benchmarks, in-process supervisors).
"""

from __future__ import annotations

import hmac
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from tusk.mcp.server.mcp_server import GitHubServer

MCP_PATH = "/mcp"


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0 picks a free one), so the URL is known first."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this; without it a tool call's small response
    # writes meet delayed ACKs and each call costs ~40 ms more.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}{MCP_PATH}"


class BearerGate:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <secret>``,
    the run's own secret; anything else gets 401 and is reported to ``on_refused``.

    Any local process can connect to a loopback port; only this run's agent user can
    read the MCP config that holds the secret."""

    def __init__(
        self, app: Any, *, secret: str, on_refused: Callable[[str, str], None] | None = None
    ) -> None:
        self.app = app
        self._expected = f"Bearer {secret}".encode()
        self._on_refused = on_refused

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        reason = "a wrong bearer secret" if given else "no bearer secret"
        if self._on_refused is not None:
            self._on_refused(f"{scope.get('method', '?')} {scope.get('path', '?')}", reason)
        body = json.dumps(
            {"error": "unauthorized", "message": f"this run's MCP endpoint refused {reason}"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _uvicorn(server: GitHubServer, bearer: str | None = None) -> Any:
    import uvicorn

    # json_response: each call is answered by one JSON body instead of an SSE stream
    # opened for it; the server sends nothing unasked, and a stream per call costs
    # about a fifth of the transport's time. (Streamable HTTP clients take either.)
    app: Any = server.lowlevel.streamable_http_app(
        streamable_http_path=MCP_PATH, host="127.0.0.1", json_response=True
    )
    if bearer is not None:
        app = BearerGate(app, secret=bearer, on_refused=server.runtime.recorder.unauthorized)
    # proxy_headers off: nothing proxies this loopback endpoint, so no request may rename
    # its client with X-Forwarded-For, and no middleware reads every request for it.
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", proxy_headers=False
    )
    return uvicorn.Server(config)


def serve(server: GitHubServer, sock: socket.socket, *, bearer: str | None = None) -> None:
    """Serve until the process is stopped."""
    _uvicorn(server, bearer).run(sockets=[sock])


def start_in_thread(
    server: GitHubServer, *, port: int = 0, bearer: str | None = None
) -> tuple[str, Callable[[], None]]:
    """Serve from a background thread (tests, benchmarks, in-process supervisors).

    Returns the URL and a function that stops the server.
    """
    sock = bind(port)
    uv = _uvicorn(server, bearer)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            sock.close()
            raise RuntimeError("the MCP server did not start within 10 s")
        time.sleep(0.01)

    def stop() -> None:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()

    return url_of(sock), stop
