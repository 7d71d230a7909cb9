"""Local GitHub: cost of holding every request to GitHub's descriptions.

Prints the one-time load time of the REST and GraphQL descriptions and the
per-request overhead of validation (request + completion + response check)
against the handler work alone. Figures only; nothing is asserted.

    python bench/bench_sandbox.py [--requests N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import requests

from tusk.sandbox.github_server import start_server
from tusk.sandbox.spec import load_graphql_schema, load_openapi

SCENARIO: dict[str, Any] = {
    "users": [{"login": "alice"}, {"login": "tusk-bot"}],
    "tokens": {
        "alice": {"user": "alice", "scopes": ["repo"]},
        "bot": {"user": "tusk-bot", "scopes": ["repo", "notifications"]},
    },
    "repos": [
        {
            "name": "alice/widgets",
            "files": {"README.md": "# Widgets\n"},
            "issues": [
                {
                    "number": 1,
                    "author": "alice",
                    "title": "Typo",
                    "body": "@tusk-bot fix",
                    "comments": [{"author": "alice", "body": f"comment {i}"} for i in range(50)],
                }
            ],
        }
    ],
}
ROUTES = (
    ("GET", "/repos/alice/widgets"),
    ("GET", "/repos/alice/widgets/issues/1"),
    ("GET", "/repos/alice/widgets/issues/1/comments?per_page=50"),
    ("GET", "/notifications"),
)


def time_requests(url: str, count: int) -> dict[str, float]:
    session = requests.Session()
    session.trust_env = False
    headers = {"Authorization": "token bot"}
    out = {}
    for method, path in ROUTES:
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            response = session.request(method, url + path, headers=headers, timeout=30)
            samples.append(time.perf_counter() - started)
            assert response.status_code == 200, response.text
        out[f"{method} {path}"] = statistics.median(samples) * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50, help="requests per route")
    args = parser.parse_args()

    started = time.perf_counter()
    spec = load_openapi()
    print(
        "REST description load (api.github.com.json, once per process): "
        f"{time.perf_counter() - started:.3f} s"
    )
    started = time.perf_counter()
    load_graphql_schema()
    print(
        "GraphQL schema build (schema.graphql, once per process):       "
        f"{time.perf_counter() - started:.3f} s"
    )
    print(f"operations indexed: {sum(len(v) for v in spec._by_length.values())} path templates")

    checked = start_server(scenario=SCENARIO, strict=True)
    time_requests(checked.url, 3)  # warm the validator cache
    with_checks = time_requests(checked.url, args.requests)
    checked.stop()

    unchecked = start_server(scenario=SCENARIO, strict=True)
    # Bypass the description: complete and check become no-ops for this run.
    unchecked.app.spec = _NoChecks(spec)  # type: ignore[assignment]
    time_requests(unchecked.url, 3)
    without_checks = time_requests(unchecked.url, args.requests)
    unchecked.stop()

    print(f"\nmedian per request over {args.requests} requests (ms):")
    print(f"{'route':58} {'checked':>8} {'unchecked':>10} {'overhead':>9}")
    for route, checked_ms in with_checks.items():
        bare = without_checks[route]
        print(f"{route:58} {checked_ms:8.2f} {bare:10.2f} {checked_ms / bare:8.2f}x")


class _NoChecks:
    """The description's matcher without request/response validation."""

    def __init__(self, spec: Any) -> None:
        self._spec = spec

    def match(self, method: str, path: str) -> Any:
        return self._spec.match(method, path)

    def check_request(self, *args: Any) -> list[str]:
        return []

    def check_response(self, *args: Any) -> list[str]:
        return []

    def complete(self, op: Any, status: int, body: Any) -> Any:
        return self._spec.complete(op, status, body)


if __name__ == "__main__":
    main()
