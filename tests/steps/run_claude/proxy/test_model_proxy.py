"""The model proxy: the key added outside the agent, SSE passed through as it comes,
tokens and cost metered, the budget enforced; and the price table behind it."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests
from pydantic import SecretStr

from tusk.contracts.pricing import Price, Spend, Usage, cost_usd, price_for, usage_from
from tusk.sandbox.model_server import ModelServer
from tusk.steps.run_claude.proxy.guard import RequestGuard
from tusk.steps.run_claude.proxy.metering import Meter, UsageTap
from tusk.steps.run_claude.proxy.proxy import MAX_IN_FLIGHT, Credentials, ModelProxy

# --------------------------------------------------------------------------- prices


def test_the_longest_table_key_prices_a_model() -> None:
    assert price_for("claude-opus-4-1-20250805").key == "claude-opus-4-1"
    assert price_for("claude-sonnet-4-5-20250929").price == Price(input=3, output=15)


def test_an_unlisted_release_is_priced_by_its_family() -> None:
    match = price_for("claude-opus-5-5")
    assert (match.key, match.guessed) == ("opus", False)


def test_a_model_nobody_knows_is_priced_as_the_dearest_so_budgets_stop_early() -> None:
    match = price_for("mystery-model-1")
    assert match.guessed and match.price.output == max(
        p.output for p in (price_for(k).price for k in ("opus", "sonnet", "haiku"))
    )


def test_tusk_yml_prices_add_to_and_replace_the_table() -> None:
    own = {"opus": Price(input=1, output=2), "house-model": Price(input=0.5, output=1)}
    assert price_for("claude-opus-5-5", own).price == Price(input=1, output=2)
    assert price_for("house-model-7", own).key == "house-model"


def test_cost_counts_cache_tokens_at_their_own_rates() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_write_tokens=1_000_000,
        cache_read_tokens=1_000_000,
    )
    assert cost_usd(usage, Price(input=4, output=20)) == pytest.approx(4 + 20 + 5 + 0.4)


def test_usage_ignores_missing_and_odd_fields() -> None:
    assert usage_from({"input_tokens": 7, "output_tokens": "9", "x": 1}) == Usage(input_tokens=7)


# --------------------------------------------------------------------------- metering

SSE = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"model":"claude-haiku-4-5","usage":'
    b'{"input_tokens":1000,"output_tokens":1,"cache_read_input_tokens":500}}}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n'
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    b'"usage":{"output_tokens":5}}\n\n'
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{},"usage":{"output_tokens":300}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


@pytest.mark.parametrize("size", [1, 7, 64, len(SSE)])
def test_usage_is_read_from_a_stream_cut_anywhere(size: int) -> None:
    tap = UsageTap(streaming=True, request_model="asked-for")
    for start in range(0, len(SSE), size):
        tap.feed(SSE[start : start + size])
    assert tap.usage() == Usage(input_tokens=1000, output_tokens=300, cache_read_tokens=500)
    assert tap.model == "claude-haiku-4-5"


def test_a_stream_cut_off_mid_way_still_counts_its_input() -> None:
    tap = UsageTap(streaming=True, request_model="m")
    tap.feed(SSE[: SSE.index(b"event: content_block_delta")])
    assert tap.usage() == Usage(input_tokens=1000, output_tokens=1, cache_read_tokens=500)


def test_usage_of_a_plain_json_answer() -> None:
    tap = UsageTap(streaming=False, request_model="m")
    body = json.dumps({"model": "claude-sonnet-4", "usage": {"input_tokens": 3}}).encode()
    tap.feed(body[:5])
    tap.feed(body[5:])
    assert tap.usage() == Usage(input_tokens=3) and tap.model == "claude-sonnet-4"


def test_the_meter_says_once_when_the_spend_passes_the_budget() -> None:
    told: list[Spend] = []
    meter = Meter(
        budget_usd=0.01, prices={"m": Price(input=0, output=10_000)}, on_exceeded=told.append
    )
    meter.add("m", Usage(output_tokens=1))  # $0.01: at the budget, not past it
    assert not meter.exceeded and told == []
    meter.add("m", Usage(output_tokens=1))
    meter.add("m", Usage(output_tokens=1))
    assert meter.exceeded and len(told) == 1
    assert told[0].requests == 2 and told[0].cost_usd == pytest.approx(0.02)
    assert "of a $0.0100 budget" in meter.spend().line()


# --------------------------------------------------------------------------- the proxy


class Upstream:
    """A Messages API that records what reached it and streams under the test's control."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                first, rest = SSE.split(b"event: content_block_delta", 1)
                self.wfile.write(first)
                self.wfile.flush()
                # The rest only once the test has seen the first event through the proxy.
                owner.release.wait(timeout=20)
                self.wfile.write(b"event: content_block_delta" + rest)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/gateway"

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.stop()


def post(
    proxy: ModelProxy, body: Any, *, key: str | None = None, **kwargs: Any
) -> requests.Response:
    """A Messages API request through ``proxy``, with the run's key as Claude Code sends it."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return requests.post(
        f"{proxy.url}/v1/messages?beta=true",
        data=data,
        headers={
            "x-api-key": proxy.client_key if key is None else key,
            "anthropic-version": "2023-06-01",
            "content-type": "application/json",
        },
        timeout=30,
        **kwargs,
    )


def test_the_proxy_adds_the_real_key_and_streams_each_event_as_it_comes(
    upstream: Upstream,
) -> None:
    meter = Meter(budget_usd=5)
    credentials = Credentials(api_key=SecretStr("sk-ant-real-key"))
    with ModelProxy(upstream=upstream.url, credentials=credentials, meter=meter) as proxy:
        response = post(proxy, {"model": "claude-haiku-4-5", "stream": True}, stream=True)
        lines = response.iter_lines()
        # The upstream holds back the rest until released: the first event must already
        # be here, so the proxy buffers nothing.
        first = [next(lines) for _ in range(2)]
        assert first[0] == b"event: message_start"
        upstream.release.set()
        rest = b"\n".join(lines)
        assert b'"output_tokens":300' in rest and b"message_stop" in rest
    [seen] = upstream.requests
    assert seen["path"] == "/gateway/v1/messages?beta=true"
    assert seen["headers"]["x-api-key"] == "sk-ant-real-key"  # the run key never goes out
    assert seen["headers"]["anthropic-version"] == "2023-06-01"
    spend = meter.spend()
    assert spend.requests == 1 and spend.usage.output_tokens == 300
    assert spend.cost_usd == pytest.approx((1000 * 1 + 300 * 5 + 500 * 0.1) / 1e6)


def test_a_gateway_token_is_sent_as_a_bearer(upstream: Upstream) -> None:
    upstream.release.set()
    credentials = Credentials(auth_token=SecretStr("gateway-token"))
    with ModelProxy(upstream=upstream.url, credentials=credentials, meter=Meter(budget_usd=5)) as p:
        post(p, {"model": "m", "stream": True}).raise_for_status()
    headers = upstream.requests[0]["headers"]
    assert headers["authorization"] == "Bearer gateway-token" and "x-api-key" not in headers


def test_past_the_budget_the_proxy_refuses_further_requests_without_a_retry() -> None:
    told: list[Spend] = []
    # Room for one small opus answer (100 tokens: $0.0075), not for a second.
    meter = Meter(budget_usd=0.0085, on_exceeded=told.append)
    script = {"steps": [{"text": "one"}, {"text": "two"}]}
    with ModelServer(script) as model:
        with ModelProxy(upstream=model.url, credentials=Credentials(), meter=meter) as proxy:
            asked = {"model": "claude-opus-5-5", "stream": True, "max_tokens": 100}
            first = post(proxy, asked)
            assert first.status_code == 200 and "message_stop" in first.text
            second = post(proxy, {**asked, "stream": False})
        assert len(model.journal()) == 1  # the second request never left the proxy
    assert second.status_code == 400  # Claude Code does not retry a 400
    assert second.json()["error"]["message"].startswith("budget exceeded: this run spent $")
    assert len(told) == 1 and told[0].priced_as == ("opus",)
    assert meter.spend().cost_usd <= 0.0085


def test_the_proxy_forwards_only_the_messages_api() -> None:
    with (
        ModelServer({"steps": []}) as model,
        ModelProxy(
            upstream=model.url, credentials=Credentials(), meter=Meter(budget_usd=5)
        ) as proxy,
    ):
        journal = requests.get(f"{proxy.url}/_model/journal", timeout=10)
        other = requests.post(f"{proxy.url}/v1/files", json={}, timeout=10)
    assert journal.status_code == 404 and other.status_code == 404


def test_the_proxy_logs_no_body(upstream: Upstream, capfd: pytest.CaptureFixture[str]) -> None:
    upstream.release.set()
    secret_prompt = "PROMPT-TEXT-THAT-MUST-NOT-BE-LOGGED"
    with ModelProxy(
        upstream=upstream.url, credentials=Credentials(), meter=Meter(budget_usd=5)
    ) as proxy:
        answer = post(proxy, {"model": "m", "stream": True, "messages": [secret_prompt]})
        assert answer.status_code == 200
    out, err = capfd.readouterr()
    assert secret_prompt not in out + err and "hi" not in out + err


# --------------------------------------------------------------------------- hostile clients


def test_a_client_without_the_runs_key_is_refused_and_nothing_goes_upstream(
    upstream: Upstream,
) -> None:
    """Any local process can connect to the proxy's port: another run's agent, or
    anything else on the host, must not spend this run's model key."""
    upstream.release.set()
    meter = Meter(budget_usd=5)
    with ModelProxy(upstream=upstream.url, credentials=Credentials(), meter=meter) as proxy:
        answers = [
            post(proxy, {"model": "m", "stream": True}, key=key)
            for key in ("", "sk-ant-guessed", proxy.client_key[:-1])
        ]
        bearer = requests.post(
            f"{proxy.url}/v1/messages",
            json={"model": "m"},
            headers={"authorization": f"Bearer {proxy.client_key}x"},
            timeout=10,
        )
    assert [a.status_code for a in [*answers, bearer]] == [401, 401, 401, 401]
    assert answers[0].json()["error"]["type"] == "authentication_error"
    assert upstream.requests == [] and meter.spend().requests == 0


WEB_TOOL_BODIES = {
    "mcp connector": {"mcp_servers": [{"type": "url", "url": "https://x.example/mcp?d=1"}]},
    "web fetch": {"tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]},
    "web search": {"tools": [{"type": "web_search_20250305", "name": "web_search"}]},
    "code execution": {"tools": [{"type": "code_execution_20250825", "name": "c"}]},
    "image by url": {
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "url", "url": "https://x/?d=1"}}],
            }
        ]
    },
    "document by url in a tool result": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [
                            {"type": "document", "source": {"type": "url", "url": "https://x/"}}
                        ],
                    }
                ],
            }
        ]
    },
}


@pytest.mark.parametrize("what", sorted(WEB_TOOL_BODIES))
def test_behind_the_fence_the_api_may_not_reach_the_network_for_the_agent(
    upstream: Upstream, what: str
) -> None:
    """The fence holds the agent's own connections; the model API fetching a URL, running
    a web tool or connecting to an MCP server for it would carry data out all the same."""
    upstream.release.set()
    body = {"model": "m", "stream": True, **WEB_TOOL_BODIES[what]}
    with ModelProxy(
        upstream=upstream.url, credentials=Credentials(), meter=Meter(budget_usd=5)
    ) as proxy:
        refused = post(proxy, body)
        proxy.guard.fenced = False  # agent.network: open
        allowed = post(proxy, body)
    assert refused.status_code == 400, refused.text
    assert "agent.network: open" in refused.json()["error"]["message"]
    assert allowed.status_code == 200 and len(upstream.requests) == 1


def test_web_search_goes_through_when_it_is_one_of_the_runs_tools(upstream: Upstream) -> None:
    upstream.release.set()
    guard = RequestGuard(fenced=True, web_search=True)
    body = {"model": "m", "stream": True, **WEB_TOOL_BODIES["web search"]}
    with ModelProxy(
        upstream=upstream.url, credentials=Credentials(), meter=Meter(budget_usd=5), guard=guard
    ) as proxy:
        assert post(proxy, body).status_code == 200
        fetch = {"model": "m", "stream": True, **WEB_TOOL_BODIES["web fetch"]}
        assert post(proxy, fetch).status_code == 400


@pytest.mark.parametrize(
    "body",
    [
        b'{"model": "m", "mcp_servers": [{"url": "https://x/"}], "mcp_servers": []}',
        b"\x1f\x8b not json",
    ],
    ids=["a key twice", "not json"],
)
def test_a_body_the_guard_cannot_read_as_the_api_would_is_refused(
    upstream: Upstream, body: bytes
) -> None:
    upstream.release.set()
    with ModelProxy(
        upstream=upstream.url, credentials=Credentials(), meter=Meter(budget_usd=5)
    ) as proxy:
        assert post(proxy, body).status_code == 400
    assert upstream.requests == []


def test_the_tools_claude_code_sends_pass_the_guard() -> None:
    body = {
        "model": "m",
        "tools": [
            {"name": "Bash", "input_schema": {"type": "object"}},
            {"type": "custom", "name": "x", "input_schema": {}},
            {"type": "tool_search_tool_regex_20251119", "name": "tool_search"},
            {"type": "advisor_20260301", "name": "advisor"},
        ],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "base64", "data": "AAAA"}}],
            }
        ],
    }
    assert RequestGuard().problem(json.dumps(body).encode()) is None


class Answers:
    """A Messages API whose answers the test shapes: each ``do_POST`` calls ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.requests = 0
        self.bodies: list[bytes] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with owner.lock:
                    owner.requests += 1
                    owner.bodies.append(body)
                answer(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def send_and_leave(proxy: ModelProxy, body: dict[str, Any], *, read: bytes) -> None:
    """Send a request, read the answer until ``read`` has come, and go away."""
    data = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"x-api-key: {proxy.client_key}\r\nContent-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        seen = b""
        while read not in seen:
            chunk = sock.recv(4096)
            assert chunk, f"the answer ended before {read!r}"
            seen += chunk


def wait_for(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_an_answer_the_client_stops_reading_is_metered_whole() -> None:
    """A whole (not streamed) answer is generated, and paid for, before its first byte:
    a client that reads its headers and leaves must not leave its usage unread."""
    usage = {"input_tokens": 1000, "output_tokens": 30000}
    answer = json.dumps(
        {"model": "claude-opus-4-1", "content": [{"type": "text", "text": "x" * 300_000}],
         "usage": usage}
    ).encode()  # fmt: skip

    def whole(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        with contextlib.suppress(OSError):
            handler.wfile.write(answer)

    api = Answers(whole)
    meter = Meter(budget_usd=5)
    try:
        with ModelProxy(upstream=api.url, credentials=Credentials(), meter=meter) as proxy:
            send_and_leave(proxy, {"model": "claude-opus-4-1", "max_tokens": 32000}, read=b"\r\n")
            wait_for(lambda: meter.spend().requests == 1)
    finally:
        api.close()
    assert meter.spend().usage == Usage(input_tokens=1000, output_tokens=30000)


def test_a_stream_cut_before_its_usage_is_metered_by_what_passed() -> None:
    """The agent reads a stream's content and leaves before the last events: the model
    generated what passed, so it is counted (estimated, on the high side)."""
    gone = threading.Event()
    text = "word " * 400
    deltas = b"".join(
        b"event: content_block_delta\ndata: "
        + json.dumps(
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": text}}
        ).encode()
        + b"\n\n"
        for _ in range(10)
    )  # fmt: skip

    def stream(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        handler.wfile.write(
            SSE.split(b"event: content_block_delta")[0] + deltas + b"event: ping\n\n"
        )
        handler.wfile.flush()
        gone.wait(10)  # the last events (usage, stop) would come after the agent left

    api = Answers(stream)
    meter = Meter(budget_usd=5)
    try:
        with ModelProxy(upstream=api.url, credentials=Credentials(), meter=meter) as proxy:
            send_and_leave(proxy, {"model": "m", "stream": True}, read=b"event: ping")
            wait_for(lambda: meter.spend().requests == 1)
    finally:
        gone.set()
        api.close()
    used = meter.spend().usage
    assert used.input_tokens == 1000
    assert used.output_tokens >= 10 * len(text) // 4  # at least what 2,000 words take


def test_forty_parallel_requests_never_spend_past_the_budget() -> None:
    """Spend is known only when an answer ends, so requests fired all at once would
    all be let through: each first holds its worst case (its input by size, its whole
    max_tokens at the model's price) against the budget, and what does not fit is
    refused before it reaches the API."""
    release = threading.Event()

    def costly(handler: BaseHTTPRequestHandler) -> None:
        release.wait(20)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        handler.wfile.write(SSE)  # 1,000 in + 300 out of claude-haiku-4-5: $0.00255

    api = Answers(costly)
    # The worst case of each: 3,000 bytes in (1,500 tokens at the cache-write rate) and
    # 300 out: $0.003375; the budget holds five of them, not six.
    meter = Meter(budget_usd=0.018)
    body = {"model": "claude-haiku-4-5", "stream": True, "max_tokens": 300}
    body["system"] = "x" * (3000 - len(json.dumps({**body, "system": ""})))
    try:
        with (
            ModelProxy(upstream=api.url, credentials=Credentials(), meter=meter) as proxy,
            ThreadPoolExecutor(max_workers=40) as pool,
        ):
            futures = [pool.submit(post, proxy, body) for _ in range(40)]
            wait_for(lambda: api.requests == MAX_IN_FLIGHT)
            release.set()
            statuses = [f.result().status_code for f in futures]
            refusals = [f.result().json() for f in futures if f.result().status_code != 200]
    finally:
        release.set()
        api.close()
    # Five worst cases fit at first; as answers end, their real cost takes the place of
    # their reservation and the room left lets a few more through, never past it.
    assert 5 <= statuses.count(200) == api.requests < 8
    assert meter.spend().cost_usd <= 0.018 and meter.reserved_usd == pytest.approx(0)
    assert meter.exceeded  # the session is stopped: the budget has no room left
    assert "worst case" in refusals[0]["error"]["message"]


def test_near_the_budget_a_request_gets_the_max_tokens_the_budget_leaves() -> None:
    def record(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        handler.wfile.write(SSE)

    api = Answers(record)
    meter = Meter(budget_usd=0.05)  # haiku output at $5/M: room for some 10,000 tokens
    try:
        with ModelProxy(upstream=api.url, credentials=Credentials(), meter=meter) as proxy:
            asked = {"model": "claude-haiku-4-5", "stream": True, "max_tokens": 128000}
            assert post(proxy, asked).status_code == 200
    finally:
        api.close()
    (sent,) = [json.loads(body) for body in api.bodies]
    assert 9000 < sent["max_tokens"] < 10000  # lowered: the answer cannot cost more


def test_a_request_body_past_the_cap_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    from tusk.steps.run_claude.proxy import proxy as model_proxy

    monkeypatch.setattr(model_proxy, "MAX_REQUEST_BYTES", 10_000)
    api = Answers(lambda handler: handler.send_response(500))
    try:
        with ModelProxy(
            upstream=api.url, credentials=Credentials(), meter=Meter(budget_usd=5)
        ) as proxy:
            big = {"model": "claude-haiku-4-5", "max_tokens": 10, "system": "x" * 20_000}
            answer = post(proxy, big)
            # without Content-Length: a chunked body is counted as it comes
            chunks = iter([json.dumps(big).encode()[i : i + 1000] for i in range(0, 20_100, 1000)])
            chunked = requests.post(
                f"{proxy.url}/v1/messages",
                data=chunks,
                headers={"x-api-key": proxy.client_key},
                timeout=10,
            )
    finally:
        api.close()
    assert answer.status_code == 413 and chunked.status_code == 413
    assert api.requests == 0
