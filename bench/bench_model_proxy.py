"""What the model proxy costs: streamed Messages API requests to the scripted model,
directly and through the proxy (which adds the key and meters every response), and
how fast the usage tap reads a stream.

    python bench/bench_model_proxy.py [--requests N]

Prints figures only: the proxy's added time per request, the ratio to a direct
request, and the tap's throughput in MB/s.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import requests
from pydantic import SecretStr

from tusk.sandbox.model_server import ModelServer
from tusk.steps.run_claude.proxy.metering import Meter, UsageTap
from tusk.steps.run_claude.proxy.proxy import Credentials, ModelProxy

BODY: dict[str, Any] = {
    "model": "claude-opus-5-5",
    "stream": True,
    "messages": [{"role": "user", "content": "x"}],
}


def timed(url: str, count: int, key: str = "") -> float:
    session = requests.Session()
    session.trust_env = False
    session.headers["x-api-key"] = key  # the proxy's own run key; the model ignores it
    started = time.perf_counter()
    for _ in range(count):
        response = session.post(f"{url}/v1/messages", json=BODY, timeout=30)
        response.raise_for_status()
        assert b"message_stop" in response.content
    return (time.perf_counter() - started) / count


def tap_throughput(megabytes: int = 20) -> float:
    event = (
        b"event: content_block_delta\n"
        b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta",'
        b'"text":"' + b"w" * 200 + b'"}}\n\n'
    )
    chunk = event * 40
    chunks = megabytes * 1_000_000 // len(chunk)
    tap = UsageTap(streaming=True, request_model="m")
    started = time.perf_counter()
    for _ in range(chunks):
        tap.feed(chunk)
    return chunks * len(chunk) / 1e6 / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    script = {"steps": [{"repeat": {"times": args.requests * 2 + 10, "step": {"text": "hello"}}}]}
    with ModelServer(script) as model:
        meter = Meter(budget_usd=1_000_000)
        credentials = Credentials(api_key=SecretStr("sk-bench"))
        with ModelProxy(upstream=model.url, credentials=credentials, meter=meter) as proxy:
            timed(proxy.url, 5, proxy.client_key)  # warm both paths
            direct = timed(model.url, args.requests)
            proxied = timed(proxy.url, args.requests, proxy.client_key)
    print(f"direct:        {direct * 1000:7.2f} ms per streamed request")
    print(f"through proxy: {proxied * 1000:7.2f} ms per streamed request")
    print(f"added:         {(proxied - direct) * 1000:7.2f} ms ({proxied / direct:.2f}x)")
    print(f"metered:       {meter.spend().requests} requests, {meter.spend().line()}")
    print(f"usage tap:     {tap_throughput():7.0f} MB/s of SSE")


if __name__ == "__main__":
    main()
