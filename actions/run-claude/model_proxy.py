"""The model proxy: the only holder of the Anthropic credentials during a run.

Claude Code gets ``ANTHROPIC_BASE_URL`` pointing here and a dummy key. The
proxy runs inside the supervisor's process (never the agent's user), listens
on 127.0.0.1, forwards the Messages API (``POST /v1/messages`` and
``/v1/messages/count_tokens``, nothing else) to the real API or the gateway
named by ``anthropic-base-url``, and adds the real key (``x-api-key``) or the
gateway's token (``Authorization: Bearer``). Responses, server-sent events
included, pass through chunk by chunk as they arrive. Each finished response
is metered (``metering.Meter``); once the run's spend is past its budget, new
requests are refused and the supervisor stops Claude Code. Bodies are never
logged: uvicorn's access log is off and nothing here prints a request.

Starlette and uvicorn serve it, httpx (the MCP SDK's own HTTP client) forwards.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2 as httpx
import uvicorn
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from tusk.actions.run_claude.metering import Meter, UsageTap

DEFAULT_UPSTREAM = "https://api.anthropic.com"
DUMMY_KEY = "sk-ant-tusk-proxy-holds-the-real-key"
FORWARDED_PATHS = frozenset({"/v1/messages", "/v1/messages/count_tokens"})
METERED_PATH = "/v1/messages"
# Hop-by-hop headers (RFC 9110 §7.6.1) and what the proxy sets itself.
DROPPED_REQUEST_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "x-api-key",
        "authorization",
        "accept-encoding",
    }
)
DROPPED_RESPONSE_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "content-encoding",
        "proxy-authenticate",
        "trailer",
        "upgrade",
    }
)
# Claude Code waits up to 10 minutes for a response (API_TIMEOUT_MS default).
UPSTREAM_TIMEOUT = httpx.Timeout(connect=30.0, read=600.0, write=120.0, pool=30.0)


@dataclass(frozen=True)
class Credentials:
    """What the proxy adds to each request: an API key, or a gateway's bearer token."""

    api_key: SecretStr | None = None
    auth_token: SecretStr | None = None

    def headers(self) -> dict[str, str]:
        found = {}
        if self.api_key is not None:
            found["x-api-key"] = self.api_key.get_secret_value()
        if self.auth_token is not None:
            found["authorization"] = f"Bearer {self.auth_token.get_secret_value()}"
        return found


def _error(status: int, kind: str, message: str) -> JSONResponse:
    """An error in the Messages API's own shape, so Claude Code reports it plainly."""
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status)


def build_app(
    *,
    upstream: str,
    credentials: Credentials,
    meter: Meter,
    client: httpx.AsyncClient | None = None,
) -> Starlette:
    base = upstream.rstrip("/")
    shared: dict[str, httpx.AsyncClient] = {}

    def http() -> httpx.AsyncClient:
        if client is not None:
            return client
        if "client" not in shared:
            shared["client"] = httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT)
        return shared["client"]

    async def forward(request: Request) -> Response:
        path = request.url.path
        if request.method != "POST" or path not in FORWARDED_PATHS:
            return _error(
                404,
                "not_found_error",
                f"the model proxy forwards only POST {', '.join(sorted(FORWARDED_PATHS))}",
            )
        spend = meter.spend()
        if spend.exceeded:
            # 400 and not 429: Claude Code would retry a 429, and nothing will change.
            return _error(
                400,
                "invalid_request_error",
                f"budget exceeded: this run spent {spend.line()}; no more model requests",
            )
        body = await request.body()
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in DROPPED_REQUEST_HEADERS
        }
        headers.update(credentials.headers())
        headers["accept-encoding"] = "identity"  # metering reads the bytes as they pass
        target = base + path + (f"?{request.url.query}" if request.url.query else "")
        outgoing = http().build_request("POST", target, content=body, headers=headers)
        try:
            upstream_response = await http().send(outgoing, stream=True)
        except httpx.HTTPError as error:
            return _error(502, "api_error", f"the model proxy could not reach the API: {error}")
        metered = path == METERED_PATH and upstream_response.status_code == 200
        tap = UsageTap(
            streaming="text/event-stream" in upstream_response.headers.get("content-type", ""),
            request_model=_model_of(body),
        )

        async def chunks() -> AsyncIterator[bytes]:
            try:
                async for chunk in upstream_response.aiter_raw():
                    if metered:
                        tap.feed(chunk)
                    yield chunk
            finally:
                # Also when Claude Code went away mid-stream: what it got was spent.
                if metered:
                    meter.add(tap.model, tap.usage())
                await upstream_response.aclose()

        response_headers = {
            k: v
            for k, v in upstream_response.headers.items()
            if k.lower() not in DROPPED_RESPONSE_HEADERS
        }
        return StreamingResponse(
            chunks(),
            status_code=upstream_response.status_code,
            headers=response_headers,
        )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if "client" in shared:
                await shared["client"].aclose()

    return Starlette(
        routes=[Route("/{path:path}", forward, methods=["GET", "POST", "PUT", "DELETE", "PATCH"])],
        lifespan=lifespan,
    )


def _model_of(body: bytes) -> str | None:
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else None


def bind_loopback() -> socket.socket:
    """A listening socket on 127.0.0.1, any free port, so the URL is known before serving."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # small SSE chunks go at once
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


class ModelProxy:
    """The proxy on 127.0.0.1 in a background thread: ``url = proxy.start()``, ``stop()``."""

    def __init__(
        self,
        *,
        upstream: str | None,
        credentials: Credentials,
        meter: Meter,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.meter = meter
        self._app = build_app(
            upstream=upstream or DEFAULT_UPSTREAM,
            credentials=credentials,
            meter=meter,
            client=client,
        )
        self._sock = bind_loopback()
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> str:
        config = uvicorn.Config(
            self._app, log_level="warning", access_log=False, lifespan="on", timeout_keep_alive=30
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the model proxy did not start")
            time.sleep(0.01)
        return self.url

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> ModelProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
