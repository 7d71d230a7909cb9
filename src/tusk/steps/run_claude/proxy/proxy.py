"""The model proxy: the only holder of the Anthropic credentials during a run.

Claude Code gets ``ANTHROPIC_BASE_URL`` pointing here and, as its key, this
run's own proxy key (``client_key``), which the proxy requires: any local
process can connect to a loopback port, and without it another run's agent (or
anything else on the host) could spend this run's model key. The proxy runs
inside the supervisor's process (never the agent's user), listens on
127.0.0.1, forwards the Messages API (``POST /v1/messages`` and
``/v1/messages/count_tokens``, nothing else) to the real API or the gateway
named by ``anthropic-base-url``, and adds the real key (``x-api-key``) or the
gateway's token (``Authorization: Bearer``). Responses, server-sent events
included, pass through chunk by chunk as they arrive.

Behind the network fence the model API must not reach the network on the
agent's behalf either: ``guard.RequestGuard`` refuses such requests.

Each response is metered (``metering.Meter``), also one the agent stopped
reading early; at most ``MAX_IN_FLIGHT`` requests are upstream at once, and the
budget is checked as each one is let through, so a burst of requests cannot
run far past it. Once the spend is past the budget, new requests are refused
and the supervisor stops Claude Code. Bodies are never logged: uvicorn's
access log is off and nothing here prints a request.

Starlette and uvicorn serve it, httpx (the MCP SDK's own HTTP client) forwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2 as httpx
import uvicorn
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tusk.contracts.pricing import Spend, Usage
from tusk.steps.run_claude.proxy.exchanges import AnswerTap, Record, tool_results
from tusk.steps.run_claude.proxy.guard import RequestGuard, guard_refusal
from tusk.steps.run_claude.proxy.metering import Meter, Reservation, UsageTap
from tusk.steps.run_claude.proxy.prior import PriorTurns

DEFAULT_UPSTREAM = "https://api.anthropic.com"
MAX_IN_FLIGHT = 4  # requests upstream at once; more wait for a slot
DRAIN_SECONDS = 60.0  # reading the rest of an answer already paid for, for its usage
FORWARDED_PATHS = frozenset({"/v1/messages", "/v1/messages/count_tokens"})
METERED_PATH = "/v1/messages"
# The Messages API takes bodies of up to 32 MB; the proxy reads no more into its process.
MAX_REQUEST_BYTES = 32 * 1000 * 1000
DEFAULT_MAX_TOKENS = 128_000  # reserved for a request that names none (the API refuses it)
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


def error_answer(status: int, kind: str, message: str) -> JSONResponse:
    """An error in the Messages API's own shape, so Claude Code reports it plainly."""
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status)


def new_client_key() -> str:
    return f"tusk-run-{secrets.token_urlsafe(32)}"


def _key_given(request: Request) -> str:
    key = request.headers.get("x-api-key") or ""
    if not key:
        auth = request.headers.get("authorization") or ""
        key = auth[7:] if auth[:7].lower() == "bearer " else ""
    return key


class _Slot:
    """One of the ``MAX_IN_FLIGHT`` upstream slots and the request's budget reservation,
    given back exactly once: settled by the answer's cost, or released unspent."""

    def __init__(self, slots: asyncio.Semaphore, meter: Meter) -> None:
        self._slots = slots
        self._meter = meter
        self._held = True
        self.reservation: Reservation | None = None
        self.on_settle: Callable[[], None] | None = None  # the exchange into the record

    def settle(self, model: str, usage: Usage) -> None:
        held, self.reservation = self.reservation, None
        self._meter.settle(held, model, usage)
        recorded, self.on_settle = self.on_settle, None
        if recorded is not None:
            recorded()

    def release(self) -> None:
        held, self.reservation = self.reservation, None
        self._meter.release(held)
        if self._held:
            self._held = False
            self._slots.release()


def build_app(
    *,
    upstream: str,
    credentials: Credentials,
    meter: Meter,
    client_key: str,
    guard: RequestGuard | None = None,
    client: httpx.AsyncClient | None = None,
    record: Record | None = None,
    prior: PriorTurns | None = None,
) -> Starlette:
    forwarder = _Forwarder(
        base=upstream.rstrip("/"),
        credentials=credentials,
        meter=meter,
        client_key=client_key,
        guard=guard if guard is not None else RequestGuard(),
        client=client,
        record=record,
        prior=prior,
    )
    return Starlette(
        routes=[
            Route(
                "/{path:path}", forwarder.forward, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]
            )
        ],
        lifespan=forwarder.lifespan,
    )


def admission_refusal(
    method: str, path: str, *, key_given: str, client_key: str
) -> JSONResponse | None:
    """Why a request may not even be read: not one the proxy forwards, or not its run's key."""
    if method != "POST" or path not in FORWARDED_PATHS:
        return error_answer(
            404,
            "not_found_error",
            f"the model proxy forwards only POST {', '.join(sorted(FORWARDED_PATHS))}",
        )
    if not hmac.compare_digest(key_given.encode(), client_key.encode()):
        # Claude Code does not retry a 401.
        return error_answer(
            401, "authentication_error", "this model proxy answers only its own run's key"
        )
    return None


def budget_refusal(spend: Spend, *, reserved: float = 0.0) -> JSONResponse:
    # 400 and not 429: Claude Code would retry a 429, and nothing will change.
    held = f", and ${reserved:.4f} is held by requests under way" if reserved > 0 else ""
    return error_answer(
        400,
        "invalid_request_error",
        f"budget exceeded: this run spent {spend.line()}{held}; the budget leaves no room "
        "for this request's worst case; no more model requests",
    )


async def read_capped(request: Request, cap: int) -> bytes | None:
    """The request body, or None past ``cap`` bytes (read no further: the agent may
    send a body of any size)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            return None
    return bytes(body)


def with_max_tokens(body: bytes, max_tokens: int) -> bytes:
    """The request with its ``max_tokens`` lowered (the guard has read it as JSON)."""
    data = json.loads(body)
    data["max_tokens"] = max_tokens
    return json.dumps(data, separators=(",", ":")).encode()


def upstream_headers(given: Iterable[tuple[str, str]], credentials: Credentials) -> dict[str, str]:
    """The client's headers without the hop-by-hop ones and its own key; the real
    credentials instead."""
    headers = {k: v for k, v in given if k.lower() not in DROPPED_REQUEST_HEADERS}
    headers.update(credentials.headers())
    headers["accept-encoding"] = "identity"  # metering reads the bytes as they pass
    return headers


def response_headers(given: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {k: v for k, v in given if k.lower() not in DROPPED_RESPONSE_HEADERS}


def upstream_target(base: str, path: str, query: str) -> str:
    return base + path + (f"?{query}" if query else "")


@dataclass
class _Forwarder:
    """The proxy's one endpoint: admit, guard, forward under a slot, meter the answer."""

    base: str
    credentials: Credentials
    meter: Meter
    client_key: str
    guard: RequestGuard
    client: httpx.AsyncClient | None = None  # given: the caller's to close
    record: Record | None = None  # what the model was told and answered
    prior: PriorTurns | None = None  # a resumed run's earlier turns, put before its own
    slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(MAX_IN_FLIGHT))
    _own_client: httpx.AsyncClient | None = None

    def http(self) -> httpx.AsyncClient:
        if self.client is not None:
            return self.client
        if self._own_client is None:
            self._own_client = httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT)
        return self._own_client

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if self._own_client is not None:
                await self._own_client.aclose()

    async def forward(self, request: Request) -> Response:
        refused = admission_refusal(
            request.method,
            request.url.path,
            key_given=_key_given(request),
            client_key=self.client_key,
        )
        if refused is not None:
            return refused
        body = await read_capped(request, MAX_REQUEST_BYTES)
        if body is None:
            return error_answer(
                413,
                "request_too_large",
                f"the model proxy takes request bodies of up to {MAX_REQUEST_BYTES} bytes",
            )
        problem = self.guard.problem(body)
        if problem is not None:
            return guard_refusal(problem)
        if self.prior is not None:  # before the budget holds it: the model reads them too
            body = self.prior.apply(body)
        await self.slots.acquire()
        slot = _Slot(self.slots, self.meter)
        try:
            body_or_refusal = self._reserve(request.url.path, body, slot)
            if isinstance(body_or_refusal, Response):
                slot.release()
                return body_or_refusal
            body = body_or_refusal
            answer = await self._send_upstream(request, body)
        except BaseException:
            slot.release()
            raise
        if not isinstance(answer, httpx.Response):
            slot.release()  # refused or unreachable: nothing is upstream
            return answer
        return await self._relay(answer, path=request.url.path, body=body, slot=slot)

    def _reserve(self, path: str, body: bytes, slot: _Slot) -> bytes | Response:
        """Hold a Messages request's worst case against the budget (``Meter.reserve``),
        its ``max_tokens`` lowered to what the budget leaves if need be: the body to
        send, or the refusal."""
        spend = self.meter.spend()
        if self.meter.exceeded:
            return budget_refusal(spend, reserved=self.meter.reserved_usd)
        if path != METERED_PATH:
            return body
        asked = _request_of(body)
        wanted = asked.get("max_tokens") or DEFAULT_MAX_TOKENS
        held = self.meter.reserve(
            asked.get("model") or "", request_bytes=len(body), max_tokens=wanted
        )
        if held is None:
            return budget_refusal(spend, reserved=self.meter.reserved_usd)
        slot.reservation = held
        return body if held.max_tokens >= wanted else with_max_tokens(body, held.max_tokens)

    async def _send_upstream(self, request: Request, body: bytes) -> Response | httpx.Response:
        """The upstream's answer (its body not read yet), or the proxy's refusal."""
        outgoing = self.http().build_request(
            "POST",
            upstream_target(self.base, request.url.path, request.url.query),
            content=body,
            headers=upstream_headers(request.headers.items(), self.credentials),
        )
        try:
            return await self.http().send(outgoing, stream=True)
        except httpx.HTTPError as error:
            return error_answer(
                502, "api_error", f"the model proxy could not reach the API: {error}"
            )

    async def _relay(
        self, answer: httpx.Response, *, path: str, body: bytes, slot: _Slot
    ) -> Response:
        """The upstream's answer back to the client, metered, the slot given back after."""
        asked = _request_of(body)
        tap = UsageTap(
            streaming="text/event-stream" in answer.headers.get("content-type", ""),
            request_model=asked.get("model"),
            request_bytes=len(body),
            request_max_tokens=asked.get("max_tokens"),
        )
        metered = path == METERED_PATH and answer.status_code == 200
        if metered and self.record is not None:
            answer_tap = tap.also = AnswerTap(streaming=tap.streaming)
            record = self.record
            slot.on_settle = lambda: record.exchange(
                results=tool_results(body), answer=answer_tap.blocks()
            )
        headers = response_headers(answer.headers.items())
        if not tap.streaming:
            return await self._whole_answer(answer, tap, metered, slot, headers)
        return self._streamed_answer(answer, tap, metered, slot, headers)

    def _streamed_answer(
        self,
        answer: httpx.Response,
        tap: UsageTap,
        metered: bool,
        slot: _Slot,
        headers: dict[str, str],
    ) -> StreamingResponse:
        raw = answer.aiter_raw()

        async def release_slot() -> None:
            slot.release()

        async def chunks() -> AsyncIterator[bytes]:
            try:
                async for chunk in raw:
                    if metered:
                        tap.feed(chunk)
                    yield chunk
            finally:
                # Also when Claude Code (or the agent) went away mid-stream: closing the
                # stream stops the model, and what was generated until then is paid for,
                # so a stream cut before its last event is metered by what passed.
                with anyio.CancelScope(shield=True):
                    if metered:
                        slot.settle(tap.model, tap.usage())
                    await answer.aclose()
                    slot.release()

        return StreamingResponse(
            chunks(),
            status_code=answer.status_code,
            headers=headers,
            background=BackgroundTask(release_slot),  # should the stream never start
        )

    async def _whole_answer(
        self,
        answer: httpx.Response,
        tap: UsageTap,
        metered: bool,
        slot: _Slot,
        headers: dict[str, str],
    ) -> Response:
        """An answer that is not a stream was generated, and paid for, before its first
        byte: it is read whole and metered before anything goes back, so a client
        that stops reading cannot leave its usage unread."""
        content = b""
        try:
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(DRAIN_SECONDS):
                    with contextlib.suppress(httpx.HTTPError):
                        content = await answer.aread()
                if metered:
                    tap.feed(content)
                    slot.settle(tap.model, tap.usage())
                await answer.aclose()
        finally:
            slot.release()
        return Response(content, status_code=answer.status_code, headers=headers)


def _request_of(body: bytes) -> dict[str, Any]:
    """The request's model and max_tokens, for metering (an odd body meters as unknown)."""
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    model, most = data.get("model"), data.get("max_tokens")
    return {
        "model": model if isinstance(model, str) else None,
        "max_tokens": most if isinstance(most, int) and not isinstance(most, bool) else None,
    }


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
        client_key: str | None = None,
        guard: RequestGuard | None = None,
        record: Record | None = None,
        prior: PriorTurns | None = None,
    ) -> None:
        self.meter = meter
        self.client_key = client_key or new_client_key()  # what Claude Code sends as its key
        self.guard = guard if guard is not None else RequestGuard()
        self._app = build_app(
            upstream=upstream or DEFAULT_UPSTREAM,
            credentials=credentials,
            meter=meter,
            client_key=self.client_key,
            guard=self.guard,
            client=client,
            record=record,
            prior=prior,
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
