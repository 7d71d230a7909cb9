"""The GitHub gateway against a small scripted HTTP server: waits, bounds, 304s, errors."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import SecretStr

from tusk.github.gateway import (
    Conflict,
    Forbidden,
    Gateway,
    GitHubError,
    NotFound,
    RateLimited,
    ServerError,
    TransportError,
    Unauthorized,
    ValidationFailed,
    is_mutation,
    retry_delay,
    route_of,
)

TOKEN = "ghp_" + "supersecret_token_value"  # built, so nothing token-shaped is tracked
DROP = -1  # a reply status meaning: close the connection without answering


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Scripted:
    """Answers each path from a queue of replies (the last one repeats) and records requests."""

    def __init__(self) -> None:
        self.replies: dict[str, list[Reply]] = {}
        self.seen: list[Seen] = []
        self.url = ""

    def script(self, path: str, *replies: Reply) -> None:
        self.replies[path] = list(replies)

    def answer(self, path: str) -> Reply:
        queue = self.replies.get(path.split("?")[0])
        if not queue:
            return Reply(404, {"message": "Not Found"})
        return queue.pop(0) if len(queue) > 1 else queue[0]


@pytest.fixture
def server() -> Iterator[Scripted]:
    scripted = Scripted()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            scripted.seen.append(Seen(self.command, self.path, dict(self.headers), body))
            reply = scripted.answer(self.path)
            if reply.status == DROP:
                self.close_connection = True
                return
            payload = b"" if reply.body is None else json.dumps(reply.body).encode()
            if isinstance(reply.body, dict) and "{auth}" in str(reply.body.get("message")):
                echoed = reply.body["message"].replace("{auth}", self.headers["authorization"])
                payload = json.dumps({"message": echoed}).encode()
            self.send_response(reply.status)
            self.send_header("content-type", "application/json; charset=utf-8")
            self.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value.replace("{base}", scripted.url))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_DELETE = _serve

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    scripted.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield scripted
    httpd.shutdown()
    httpd.server_close()


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_gateway(url: str, sleeps: Sleeps, **kwargs: Any) -> Gateway:
    return Gateway(
        api_url=url, token=SecretStr(TOKEN), token_name="bot", sleep=sleeps, timeout=5, **kwargs
    )


SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}


def test_retry_after_is_honoured(server: Scripted) -> None:
    server.script("/x", Reply(403, SECONDARY, {"retry-after": "7"}), Reply(200, {"ok": 1}))
    sleeps = Sleeps()
    gateway = make_gateway(server.url, sleeps)
    assert gateway.get("/x") == {"ok": 1}
    assert sleeps == [7.0]
    assert gateway.ledger.by_route["GET /x"] == 2 and gateway.ledger.retries == 1


def test_retry_after_on_503_is_honoured_over_backoff(server: Scripted) -> None:
    server.script("/x", Reply(503, {"message": "busy"}, {"retry-after": "12"}), Reply(200, {}))
    sleeps = Sleeps()
    make_gateway(server.url, sleeps).get("/x")
    assert sleeps == [12.0]


def test_primary_rate_limit_waits_until_reset_by_the_injected_clock(server: Scripted) -> None:
    spent = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1030"}
    server.script("/x", Reply(403, {"message": "API rate limit exceeded"}, spent), Reply(200, []))
    sleeps = Sleeps()
    gateway = make_gateway(server.url, sleeps, clock=lambda: 1000.0)
    assert gateway.get("/x") == []
    assert sleeps == [31.0]


def test_rate_limit_reset_beyond_the_wait_budget_fails_without_sleeping(server: Scripted) -> None:
    spent = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "99999"}
    server.script("/x", Reply(429, {"message": "API rate limit exceeded"}, spent))
    sleeps = Sleeps()
    gateway = make_gateway(server.url, sleeps, clock=lambda: 0.0, max_wait=600)
    with pytest.raises(RateLimited) as caught:
        gateway.get("/x")
    assert sleeps == []
    assert "GET /x: the bot token (TUSK_BOT_TOKEN) is rate limited" in str(caught.value)
    assert "Run again later" in str(caught.value)


def test_secondary_limit_message_without_header_waits_a_minute_growing(server: Scripted) -> None:
    server.script("/x", Reply(403, SECONDARY), Reply(403, SECONDARY), Reply(200, {}))
    sleeps = Sleeps()
    make_gateway(server.url, sleeps).get("/x")
    assert sleeps == [60.0, 120.0]


def test_server_errors_back_off_and_attempts_are_bounded(server: Scripted) -> None:
    server.script("/x", Reply(502, {"message": "Bad Gateway"}))
    sleeps = Sleeps()
    gateway = make_gateway(server.url, sleeps, max_attempts=4)
    with pytest.raises(ServerError) as caught:
        gateway.get("/x")
    assert sleeps == [1.0, 2.0, 4.0]
    assert len(server.seen) == 4 and gateway.ledger.retries == 3
    assert caught.value.status == 502 and "outage" in str(caught.value)


def test_secondary_limit_that_never_clears_is_bounded_too(server: Scripted) -> None:
    server.script("/x", Reply(429, SECONDARY, {"retry-after": "1"}))
    sleeps = Sleeps()
    with pytest.raises(RateLimited):
        make_gateway(server.url, sleeps, max_attempts=3).post("/x", json={})
    assert sleeps == [1.0, 1.0] and len(server.seen) == 3


def test_ordinary_forbidden_is_not_retried(server: Scripted) -> None:
    server.script("/x", Reply(403, {"message": "Resource not accessible by integration"}))
    sleeps = Sleeps()
    with pytest.raises(Forbidden) as caught:
        make_gateway(server.url, sleeps).patch("/x", json={"body": "b"})
    assert sleeps == [] and len(server.seen) == 1
    text = str(caught.value)
    assert text.startswith(
        "PATCH /x: the bot token (TUSK_BOT_TOKEN) may not do this: a permission problem, "
        "not an outage"
    )
    assert "(GitHub said: Resource not accessible by integration)" in text
    assert "Give the secret TUSK_BOT_TOKEN the needed scope" in text
    assert caught.value.cause == "permission" and caught.value.token == "bot"


@pytest.mark.parametrize(
    ("status", "error_class", "words"),
    [
        (401, Unauthorized, "GitHub refused the bot token (TUSK_BOT_TOKEN)"),
        (404, NotFound, "not found"),
        (409, Conflict, "conflict"),
        (410, GitHubError, "unexpected status 410"),
        (501, ServerError, "GitHub cannot serve this request (501)"),
    ],
)
def test_final_statuses_map_to_one_error_class_each(
    server: Scripted, status: int, error_class: type[GitHubError], words: str
) -> None:
    server.script("/repos/a/b", Reply(status, {"message": "nope"}))
    sleeps = Sleeps()
    with pytest.raises(error_class) as caught:
        make_gateway(server.url, sleeps).get("/repos/a/b")
    assert sleeps == [] and len(server.seen) == 1  # none of these clears by waiting
    assert type(caught.value) is error_class
    assert caught.value.status == status and words in str(caught.value)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_server_error_is_called_an_outage_not_a_token_problem(
    server: Scripted, status: int
) -> None:
    server.script("/x", *[Reply(status, {"message": "Server Error"})] * 3)
    with pytest.raises(ServerError) as caught:
        make_gateway(server.url, Sleeps(), max_attempts=3).get("/x")
    error = caught.value
    assert error.cause == "outage" and error.is_outage and not error.may_have_landed
    assert "an outage on GitHub's side, not a problem with the bot token (TUSK_BOT_TOKEN)" in str(
        error
    )
    assert "permission" not in str(error)


@pytest.mark.parametrize(
    ("token_name", "label"),
    [
        ("bot", "the bot token (TUSK_BOT_TOKEN)"),
        ("dispatch", "the dispatch token (TUSK_DISPATCH_TOKEN)"),
        ("agent", "the agent token (TUSK_AGENT_TOKEN)"),
        ("read", "the read token (TUSK_READ_TOKEN)"),
    ],
)
def test_a_refused_token_is_named_by_its_variable(
    server: Scripted, token_name: str, label: str
) -> None:
    server.script("/user", Reply(401, {"message": "Bad credentials"}))
    gateway = Gateway(
        api_url=server.url,
        token=SecretStr("not-a-real-token-value"),
        token_name=token_name,
        sleep=Sleeps(),
    )
    with pytest.raises(Unauthorized) as caught:
        gateway.get("/user")
    assert f"GitHub refused {label}" in str(caught.value)
    assert caught.value.cause == "auth" and caught.value.token == token_name


def test_a_failed_write_after_a_5xx_may_have_landed(server: Scripted) -> None:
    server.script("/c", Reply(502, {"message": "Bad Gateway"}))
    with pytest.raises(ServerError) as caught:
        make_gateway(server.url, Sleeps()).post("/c", json={"body": "x"}, may_repeat=False)
    assert caught.value.may_have_landed and caught.value.cause == "outage"


def test_a_refused_write_did_not_land(server: Scripted) -> None:
    server.script("/c", Reply(403, {"message": "Resource not accessible by integration"}))
    with pytest.raises(Forbidden) as caught:
        make_gateway(server.url, Sleeps()).post("/c", json={"body": "x"}, may_repeat=False)
    assert not caught.value.may_have_landed


def test_graphql_mutation_is_not_repeated_after_a_5xx(server: Scripted) -> None:
    server.script("/graphql", Reply(502, {"message": "Bad Gateway"}))
    gateway = make_gateway(server.url, Sleeps())
    with pytest.raises(ServerError) as caught:
        gateway.graphql("mutation($b: String!) { addComment(input: {body: $b}) { id } }")
    assert len(server.seen) == 1 and caught.value.may_have_landed


def test_graphql_query_is_repeated_after_a_5xx(server: Scripted) -> None:
    server.script(
        "/graphql", Reply(502, {"message": "Bad Gateway"}), Reply(200, {"data": {"viewer": 1}})
    )
    assert make_gateway(server.url, Sleeps()).graphql("query { viewer { login } }") == {"viewer": 1}
    assert len(server.seen) == 2


@pytest.mark.parametrize(
    ("document", "mutation"),
    [
        ("mutation { a }", True),
        ("  \n# add a comment\nmutation Add($x: ID!) { a }", True),
        ("query { mutation }", False),
        ("{ viewer { login } }", False),
    ],
)
def test_mutations_are_recognised(document: str, mutation: bool) -> None:
    assert is_mutation(document) is mutation


def test_validation_failure_carries_githubs_details(server: Scripted) -> None:
    detail = {"resource": "IssueComment", "field": "body", "code": "custom"}
    server.script("/c", Reply(422, {"message": "Validation Failed", "errors": [detail]}))
    with pytest.raises(ValidationFailed) as caught:
        make_gateway(server.url, Sleeps()).post("/c", json={"body": "x" * 10})
    assert caught.value.errors == [detail] and "IssueComment" in str(caught.value)


def test_token_is_sent_but_never_appears_in_error_text(server: Scripted) -> None:
    server.script("/x", Reply(401, {"message": "Bad credentials: {auth}"}))
    with pytest.raises(Unauthorized) as caught:
        make_gateway(server.url, Sleeps()).get("/x")
    assert server.seen[0].headers["Authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in str(caught.value) and TOKEN not in repr(caught.value)
    assert TOKEN not in caught.value.github_message and "***" in str(caught.value)


def test_unreachable_github_is_a_transport_error_after_bounded_attempts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = Sleeps()
    gateway = make_gateway(f"http://127.0.0.1:{port}", sleeps, max_attempts=3)
    with pytest.raises(TransportError) as caught:
        gateway.get("/x")
    assert sleeps == [1.0, 2.0]
    assert "could not reach GitHub after 3 attempt(s)" in str(caught.value)
    assert "TUSK_GITHUB_API_URL" in str(caught.value) and TOKEN not in str(caught.value)
    # Each wait is said as it starts: an offline poll is not silent for its retries.
    waits = [r.getMessage() for r in caplog.records if r.name == "tusk.github.gateway"]
    assert waits == [
        "GET /x: GitHub not reached (ConnectionError); trying again in 1 s (attempt 2 of 3)",
        "GET /x: GitHub not reached (ConnectionError); trying again in 2 s (attempt 3 of 3)",
    ]


def test_not_modified_is_returned_and_counted_apart(server: Scripted) -> None:
    stamp = "Mon, 30 Nov 2026 06:00:00 GMT"
    server.script(
        "/notifications",
        Reply(200, [{"id": "1"}], {"last-modified": stamp, "x-poll-interval": "60"}),
        Reply(304),
    )
    gateway = make_gateway(server.url, Sleeps())
    first = gateway.conditional_get("/notifications")
    second = gateway.conditional_get(
        "/notifications", if_modified_since=first.header("Last-Modified")
    )
    assert first.status == 200 and first.body == [{"id": "1"}]
    assert second.status == 304 and second.body is None
    assert server.seen[1].headers["If-Modified-Since"] == stamp
    assert gateway.ledger.by_route == {"GET /notifications": 1}
    assert gateway.ledger.not_modified == {"GET /notifications": 1}
    assert gateway.ledger.total == 1 and gateway.ledger.total_not_modified == 1


def test_etag_is_sent_as_if_none_match(server: Scripted) -> None:
    server.script("/x", Reply(304))
    make_gateway(server.url, Sleeps()).conditional_get("/x", etag='W/"abc"')
    assert server.seen[0].headers["If-None-Match"] == 'W/"abc"'


def test_pagination_follows_link_to_the_end(server: Scripted) -> None:
    server.script(
        "/repos/a/b/issues",
        Reply(200, [1, 2], {"link": '<{base}/repos/a/b/issues?page=2&per_page=2>; rel="next"'}),
        Reply(200, [3, 4], {"link": '<{base}/repos/a/b/issues?page=3&per_page=2>; rel="next"'}),
        Reply(200, [5], {"link": '<{base}/repos/a/b/issues?page=1&per_page=2>; rel="first"'}),
    )
    gateway = make_gateway(server.url, Sleeps())
    assert list(gateway.paginate("/repos/a/b/issues", params={"state": "all"}, per_page=2)) == [
        1,
        2,
        3,
        4,
        5,
    ]
    assert server.seen[0].path == "/repos/a/b/issues?state=all&per_page=2"
    assert server.seen[2].path == "/repos/a/b/issues?page=3&per_page=2"
    assert gateway.ledger.by_route == {"GET /repos/{owner}/{repo}/issues": 3}


def test_pagination_reads_lists_inside_objects(server: Scripted) -> None:
    server.script("/search/issues", Reply(200, {"total_count": 2, "items": [{"n": 1}, {"n": 2}]}))
    items = make_gateway(server.url, Sleeps()).paginate("/search/issues", item_key="items")
    assert list(items) == [{"n": 1}, {"n": 2}]


def test_graphql_errors_raise_with_githubs_message(server: Scripted) -> None:
    server.script(
        "/graphql", Reply(200, {"data": None, "errors": [{"message": "Field 'x' doesn't exist"}]})
    )
    with pytest.raises(GitHubError) as caught:
        make_gateway(server.url, Sleeps()).graphql("{ x }")
    assert "Field 'x' doesn't exist" in str(caught.value)


def test_graphql_url_next_to_rest_root_on_github_and_enterprise() -> None:
    sleeps = Sleeps()
    assert (
        make_gateway("https://api.github.com", sleeps).graphql_url
        == "https://api.github.com/graphql"
    )
    ghes = make_gateway("https://ghe.example/api/v3", sleeps)
    assert ghes.graphql_url == "https://ghe.example/api/graphql"


@pytest.mark.parametrize(
    ("method", "path", "route"),
    [
        (
            "get",
            "/repos/alice/widgets/issues/12/comments",
            "GET /repos/{owner}/{repo}/issues/{n}/comments",
        ),
        ("POST", "/api/v3/repos/a/b/dispatches", "POST /repos/{owner}/{repo}/dispatches"),
        ("GET", "/users/alice/repos?per_page=100", "GET /users/{name}/repos"),
        ("GET", "/notifications", "GET /notifications"),
    ],
)
def test_routes_are_counted_as_templates(method: str, path: str, route: str) -> None:
    assert route_of(method, path) == route


@pytest.mark.parametrize(
    ("status", "headers", "body", "attempt", "expected"),
    [
        (200, {}, None, 1, None),
        (404, {}, None, 1, None),
        (403, {}, {"message": "Must have admin rights"}, 1, None),
        (None, {}, None, 3, 4.0),
        (500, {}, None, 10, 30.0),
        (429, {}, None, 2, 120.0),
        (403, {"Retry-After": "5"}, None, 1, 5.0),
        (403, {"retry-after": "soon"}, None, 1, 60.0),
        (403, {"retry-after": "Thu, 01 Jan 1970 00:16:50 GMT"}, None, 1, 10.0),
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "900"}, None, 1, 1.0),
    ],
)
def test_retry_delay_decisions(
    status: int | None, headers: dict[str, str], body: Any, attempt: int, expected: float | None
) -> None:
    assert retry_delay(status, headers, body, attempt=attempt, now=1000.0) == expected


def test_write_that_must_not_repeat_is_not_retried_after_a_5xx(server: Scripted) -> None:
    server.script("/c", Reply(502, {"message": "Bad Gateway"}), Reply(201, {"id": 1}))
    sleeps = Sleeps()
    with pytest.raises(ServerError):
        make_gateway(server.url, sleeps).post("/c", json={"body": "hi"}, may_repeat=False)
    assert sleeps == [] and len(server.seen) == 1


def test_write_that_must_not_repeat_is_not_retried_after_a_dropped_connection(
    server: Scripted,
) -> None:
    server.script("/c", Reply(DROP), Reply(201, {"id": 1}))
    sleeps = Sleeps()
    with pytest.raises(TransportError):
        make_gateway(server.url, sleeps).post("/c", json={"body": "hi"}, may_repeat=False)
    assert sleeps == [] and len(server.seen) == 1


def test_write_that_must_not_repeat_still_waits_out_a_rate_limit(server: Scripted) -> None:
    server.script("/c", Reply(429, SECONDARY, {"retry-after": "3"}), Reply(201, {"id": 1}))
    sleeps = Sleeps()
    response = make_gateway(server.url, sleeps).post("/c", json={}, may_repeat=False)
    assert response.status == 201 and sleeps == [3.0]


def test_write_that_must_not_repeat_is_retried_when_never_connected() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = Sleeps()
    with pytest.raises(TransportError):
        make_gateway(f"http://127.0.0.1:{port}", sleeps, max_attempts=2).post(
            "/c", json={}, may_repeat=False
        )
    assert sleeps == [1.0]


def test_dropped_connection_is_retried_for_repeatable_requests(server: Scripted) -> None:
    server.script("/x", Reply(DROP), Reply(200, {"ok": True}))
    sleeps = Sleeps()
    assert make_gateway(server.url, sleeps).get("/x") == {"ok": True}
    assert sleeps == [1.0]


@pytest.fixture
def proxy() -> Iterator[list[str]]:
    """A stand-in proxy that records every request line it is sent (and answers 200 {})."""
    seen: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            seen.append(f"{self.command} {self.path}")
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST = do_CONNECT = _serve

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    seen.append(f"http://127.0.0.1:{httpd.server_address[1]}")  # seen[0]: its URL
    yield seen
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("token", [TOKEN, None], ids=["bot token", "anonymous"])
def test_gateway_ignores_proxy_settings_and_netrc_from_the_environment(
    server: Scripted,
    proxy: list[str],
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    token: str | None,
) -> None:
    """A runner's proxy variables or a .netrc must neither see the token nor replace it."""
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone-else password netrc-password\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, proxy[0])
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    server.script("/repos/a/b", Reply(200, {"full_name": "a/b"}))
    gateway = Gateway(
        api_url=server.url,
        token=SecretStr(token) if token else None,
        token_name="bot" if token else "anonymous",
        sleep=Sleeps(),
        timeout=5,
    )

    assert gateway.get("/repos/a/b") == {"full_name": "a/b"}

    assert proxy[1:] == []  # nothing went through the proxy
    sent = {k.lower(): v for k, v in server.seen[0].headers.items()}
    if token:
        assert sent["authorization"] == f"Bearer {TOKEN}"
    else:
        assert "authorization" not in sent  # no Basic auth from .netrc either
