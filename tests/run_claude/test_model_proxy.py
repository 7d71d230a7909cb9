"""The model proxy: the key added outside the agent, SSE passed through as it comes,
tokens and cost metered, the budget enforced; and the price table behind it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests
from pydantic import SecretStr
from tusk.actions.run_claude.metering import Meter, UsageTap
from tusk.actions.run_claude.model_proxy import Credentials, ModelProxy
from tusk.sandbox.model_server import ModelServer

from tusk.pricing import Price, Spend, Usage, cost_usd, price_for, usage_from

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


def post(url: str, body: dict[str, Any], **kwargs: Any) -> requests.Response:
    return requests.post(
        f"{url}/v1/messages?beta=true",
        json=body,
        headers={"x-api-key": "dummy-from-the-agent", "anthropic-version": "2023-06-01"},
        timeout=30,
        **kwargs,
    )


def test_the_proxy_adds_the_real_key_and_streams_each_event_as_it_comes(
    upstream: Upstream,
) -> None:
    meter = Meter(budget_usd=5)
    credentials = Credentials(api_key=SecretStr("sk-ant-real-key"))
    with ModelProxy(upstream=upstream.url, credentials=credentials, meter=meter) as proxy:
        response = post(proxy.url, {"model": "claude-haiku-4-5", "stream": True}, stream=True)
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
    assert seen["headers"]["x-api-key"] == "sk-ant-real-key"  # the dummy never goes out
    assert seen["headers"]["anthropic-version"] == "2023-06-01"
    spend = meter.spend()
    assert spend.requests == 1 and spend.usage.output_tokens == 300
    assert spend.cost_usd == pytest.approx((1000 * 1 + 300 * 5 + 500 * 0.1) / 1e6)


def test_a_gateway_token_is_sent_as_a_bearer(upstream: Upstream) -> None:
    upstream.release.set()
    credentials = Credentials(auth_token=SecretStr("gateway-token"))
    with ModelProxy(upstream=upstream.url, credentials=credentials, meter=Meter(budget_usd=5)) as p:
        post(p.url, {"model": "m", "stream": True}).raise_for_status()
    headers = upstream.requests[0]["headers"]
    assert headers["authorization"] == "Bearer gateway-token" and "x-api-key" not in headers


def test_past_the_budget_the_proxy_refuses_further_requests_without_a_retry() -> None:
    told: list[Spend] = []
    meter = Meter(budget_usd=0.0001, on_exceeded=told.append)
    script = {"steps": [{"text": "one"}, {"text": "two"}]}
    with ModelServer(script) as model:
        with ModelProxy(upstream=model.url, credentials=Credentials(), meter=meter) as proxy:
            first = post(proxy.url, {"model": "claude-opus-5-5", "stream": True})
            assert first.status_code == 200 and "message_stop" in first.text
            second = post(proxy.url, {"model": "claude-opus-5-5", "stream": False})
        assert len(model.journal()) == 1  # the second request never left the proxy
    assert second.status_code == 400  # Claude Code does not retry a 400
    assert second.json()["error"]["message"].startswith("budget exceeded: this run spent $")
    assert len(told) == 1 and told[0].priced_as == ("opus",)


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
        answer = post(proxy.url, {"model": "m", "stream": True, "messages": [secret_prompt]})
        assert answer.status_code == 200
    out, err = capfd.readouterr()
    assert secret_prompt not in out + err and "hi" not in out + err
