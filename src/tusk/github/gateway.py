"""The GitHub gateway: the only code that speaks GitHub's REST and GraphQL APIs.

All of Tusk's GitHub API traffic goes through ``Gateway``: REST with ``Link``
pagination, conditional GETs (``If-Modified-Since`` / ``ETag`` → 304) and
GraphQL, spoken over ``requests`` rather than PyGithub (kept to the tests; the
measured reasons are in ARCHITECTURE.md). Every request is retried within
bounds when GitHub asks for patience (``Retry-After``, an exhausted rate limit,
a secondary limit, 5xx), and counted per route in a ``RequestLedger`` that
benchmarks read (304s apart).

The decisions are pure and live beside it, tested without a network: which
error a response is (``tusk.github.errors``), how long to wait before a retry
(``tusk.github.retries``) and how requests are counted (``tusk.github.ledger``).
Their names stay importable from here.
"""

from __future__ import annotations

import email.utils
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
import urllib3
from pydantic import SecretStr

from tusk.github.errors import (
    RETRYABLE_SERVER_STATUSES,
    TOKEN_ENV_NAMES,
    Conflict,
    ErrorCause,
    ErrorContext,
    Forbidden,
    GitHubError,
    NotFound,
    RateLimited,
    ServerError,
    TransportError,
    Unauthorized,
    ValidationFailed,
    error_for,
    github_message,
    graphql_cause,
    token_label,
)
from tusk.github.ledger import RequestLedger, route_of
from tusk.github.pacing import ContentPacer
from tusk.github.retries import (
    graphql_rate_limited,
    graphql_reset_delay,
    retry_after_seconds,
    retry_delay,
)

# The gateway's own names, and those of its parts that callers import from here.
__all__ = [
    "API_VERSION",
    "RETRYABLE_SERVER_STATUSES",
    "TOKEN_ENV",
    "TOKEN_ENV_NAMES",
    "USER_AGENT",
    "Conflict",
    "ErrorCause",
    "ErrorContext",
    "Forbidden",
    "Gateway",
    "GitHubError",
    "NotFound",
    "RateLimited",
    "RequestLedger",
    "Response",
    "ServerError",
    "TransportError",
    "Unauthorized",
    "ValidationFailed",
    "error_for",
    "gateway_from_secrets",
    "github_message",
    "graphql_cause",
    "graphql_rate_limited",
    "graphql_reset_delay",
    "is_content_request",
    "is_mutation",
    "retry_after_seconds",
    "retry_delay",
    "route_of",
    "token_label",
]

logger = logging.getLogger(__name__)
USER_AGENT = "tusk-agent-platform"
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
MUTATION = re.compile(r"^\s*(?:#[^\n]*\n\s*)*mutation\b")  # comments may come first
API_VERSION = "2022-11-28"


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: Any
    text: str
    url: str
    links: Mapping[str, str] = field(default_factory=dict)  # Link header: rel -> URL

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def is_content_request(method: str, path: str) -> bool:
    """Writes count as content creation, except marking notifications (the inbox) and
    GraphQL, which ``Gateway.graphql`` classifies by its document."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:  # GitHub Enterprise Server: /api/v3/..., /api/graphql
        parts = parts[2:] if parts[1:2] == ["v3"] else parts[1:]
    if parts[:1] in (["notifications"], ["graphql"]):
        return False
    return method.upper() in WRITE_METHODS


# --------------------------------------------------------------------------- the gateway


def scrub_token(text: str, secret: str) -> str:
    """``text`` with each whole occurrence of ``secret`` shown as ``***``.

    A token echoed back stands on its own (after a space, a quote, ``=`` or
    ``Bearer``); a short test token such as ``x`` inside a word ("Max retries
    exceeded") is not it, and blanking it there garbles the message.
    """
    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(secret)}(?![A-Za-z0-9_])", "***", text)


class Gateway:
    """One token's view of GitHub.

    ``token_name`` is a label for logs and errors ("bot", "agent", ...); the
    token itself never leaves this object except in the Authorization header.
    """

    def __init__(
        self,
        *,
        api_url: str,
        token: SecretStr | None,
        token_name: str,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_attempts: int = 5,
        max_wait: float = 900.0,
        timeout: float = 30.0,
        ledger: RequestLedger | None = None,
        pacer: ContentPacer | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        # Content-creating requests are paced under GitHub's content-creation limit.
        self.pacer = pacer if pacer is not None else ContentPacer()
        self.token_name = token_name
        self._token = token
        self._sleep = sleep
        self._clock = clock
        self.max_attempts = max_attempts
        self.max_wait = max_wait
        self.timeout = timeout
        self.ledger = ledger if ledger is not None else RequestLedger()
        self._session = requests.Session()
        self._session.trust_env = False  # never pick up a .netrc or proxy credentials
        self.server_time: datetime | None = None  # GitHub's clock, from the last Date header

    # -- plumbing

    def sleep(self, seconds: float) -> None:
        """Wait with the gateway's (injectable) sleep, e.g. between look-ups."""
        self._sleep(seconds)

    def _headers(self, extra: Mapping[str, str] | None, accept: str | None) -> dict[str, str]:
        headers = {
            "Accept": accept or "application/vnd.github+json",
            "User-Agent": USER_AGENT,
            "X-GitHub-Api-Version": API_VERSION,
        }
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token.get_secret_value()}"
        if extra:
            headers.update(extra)
        return headers

    def url_for(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            return path_or_url
        return self.api_url + "/" + path_or_url.lstrip("/")

    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        accept: str | None = None,
        allow_statuses: tuple[int, ...] = (),
        follow_redirects: bool = True,
        may_repeat: bool = True,
        content: bool | None = None,
    ) -> Response:
        """Send one request, retrying within bounds. Raises ``GitHubError`` for a
        final status >= 400 unless it is listed in ``allow_statuses``.

        ``may_repeat=False`` is for writes that must not happen twice (a comment,
        an issue): they are retried only when GitHub surely did not apply them
        (a rate limit, a connection never made), not after a 5xx or a dropped
        connection, where the write may have landed.

        ``content``: whether the request creates content and is paced (default:
        every POST, PATCH, PUT and DELETE except GraphQL queries and marking
        notifications)."""
        method = method.upper()
        url = self.url_for(path_or_url)
        path = urlsplit(url).path
        route = route_of(method, path)
        if content is None:
            content = is_content_request(method, path)
        send = {
            "params": params,
            "json": json,
            "headers": self._headers(headers, accept),
            "allow_redirects": follow_redirects,
        }
        attempt = 0
        while True:
            attempt += 1
            if content:
                wait = self.pacer.schedule(self._clock())
                if wait > 0:
                    self._sleep(wait)
            answer = self._send(method, url, route, send)
            if isinstance(answer, Response):
                if answer.status < 400 or answer.status in allow_statuses:
                    return answer
                status, error = answer.status, None
                delay = retry_delay(
                    status, answer.headers, answer.body, attempt=attempt, now=self._clock()
                )
            else:
                status, error = None, answer
                delay = retry_delay(None, {}, None, attempt=attempt, now=self._clock())
            if not may_repeat and _may_have_landed(status, error):
                delay = None
            if delay is None or attempt >= self.max_attempts or delay > self.max_wait:
                raise self._scrubbed(self._failure(method, path, attempt, answer))
            self.ledger.record_retry()
            if error is not None:  # a wait nobody would otherwise see: say what it is for
                logger.warning(
                    "%s %s: GitHub not reached (%s); trying again in %.0f s (attempt %d of %d)",
                    method,
                    path,
                    type(error).__name__,
                    delay,
                    attempt + 1,
                    self.max_attempts,
                )
            self._sleep(delay)

    def _send(
        self, method: str, url: str, route: str, send: Mapping[str, Any]
    ) -> Response | requests.RequestException:
        """One attempt: GitHub's answer, or the error that kept it from arriving. Counted."""
        try:
            raw = self._session.request(method, url, timeout=self.timeout, **send)
            headers = {k.lower(): v for k, v in raw.headers.items()}
            self.server_time = _http_date(headers.get("date")) or self.server_time
            links = {rel: str(link["url"]) for rel, link in raw.links.items()}
            answer = Response(raw.status_code, headers, _parse_body(raw), raw.text, url, links)
        except requests.RequestException as error:
            self.ledger.record(route, None)
            return error
        for hop in raw.history:  # each redirect followed was a request GitHub counted
            self.ledger.record(route_of(method, urlsplit(hop.url).path), hop.status_code)
        if raw.history:
            route = route_of(method, urlsplit(raw.url).path)
        self.ledger.record(route, answer.status)
        return answer

    def _failure(
        self, method: str, path: str, attempt: int, answer: Response | requests.RequestException
    ) -> GitHubError:
        """The error that ends a request: GitHub's final answer, or no answer at all."""
        if isinstance(answer, Response):
            return error_for(method, path, answer.status, answer.body, token=self.token_name)
        return TransportError(
            f"could not reach GitHub after {attempt} attempt(s): a network problem "
            f"or an outage, not a problem with {token_label(self.token_name)} "
            f"({network_reason(answer)})",
            method=method,
            path=path,
            hint=f"Check TUSK_GITHUB_API_URL ({self.api_url}) and the network; run again later",
            token=self.token_name,
            cause="outage",
            may_have_landed=method != "GET" and _may_have_landed(None, answer),
        )

    def _scrubbed(self, error: GitHubError) -> GitHubError:
        """The error with the token blanked out, should any text echo it back."""
        secret = self._token.get_secret_value() if self._token is not None else ""
        if secret and secret in str(error):
            error.args = tuple(scrub_token(str(arg), secret) for arg in error.args)
            error.github_message = scrub_token(error.github_message, secret)
            error.title = scrub_token(error.title, secret)
        return error

    def get(
        self, path: str, *, params: Mapping[str, Any] | None = None, accept: str | None = None
    ) -> Any:
        return self.request("GET", path, params=params, accept=accept).body

    def get_text(self, path: str, *, accept: str, params: Mapping[str, Any] | None = None) -> str:
        """GET a non-JSON media type (e.g. ``application/vnd.github.diff``)."""
        return self.request("GET", path, params=params, accept=accept).text

    def post(self, path: str, json: Any = None, **kwargs: Any) -> Response:
        return self.request("POST", path, json=json, **kwargs)

    def patch(self, path: str, json: Any = None, **kwargs: Any) -> Response:
        return self.request("PATCH", path, json=json, **kwargs)

    def put(self, path: str, json: Any = None, **kwargs: Any) -> Response:
        return self.request("PUT", path, json=json, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Response:
        return self.request("DELETE", path, **kwargs)

    def paginate(
        self,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        per_page: int = 100,
        item_key: str | None = None,
    ) -> Iterator[Any]:
        """Yield every item of a list endpoint, following ``Link: rel="next"`` to the end.

        ``item_key`` names the list inside an object response (e.g. ``items``
        for search, ``artifacts`` for artifact listings).
        """
        query: dict[str, Any] = {**(params or {}), "per_page": per_page}
        url: str | None = path
        while url is not None:
            response = self.request("GET", url, params=query)
            items = response.body[item_key] if item_key else response.body
            yield from items
            url = response.links.get("next")
            query = {}  # the next link carries the query

    def conditional_get(
        self,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        if_modified_since: str | None = None,
        etag: str | None = None,
    ) -> Response:
        """A GET that may be answered 304 Not Modified (returned, not raised)."""
        headers: dict[str, str] = {}
        if if_modified_since:
            headers["If-Modified-Since"] = if_modified_since
        if etag:
            headers["If-None-Match"] = etag
        return self.request("GET", path, params=params, headers=headers, allow_statuses=(304,))

    def graphql(self, query: str, variables: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Run a GraphQL document; raises ``GitHubError`` when GitHub reports errors.

        A mutation is never repeated after an answer that does not prove it failed
        (a 5xx, a reset, a timeout): it may have been applied. The error then says
        ``may_have_landed`` and the caller looks for what it wrote before trying again.
        """
        response = self.graphql_response(query, variables)
        body = response.body if isinstance(response.body, dict) else {}
        errors = body.get("errors") or []
        if errors:
            messages = "; ".join(str(e.get("message", e)) for e in errors)
            raise self._scrubbed(
                GitHubError(
                    "the GraphQL query failed",
                    status=response.status,
                    method="POST",
                    path="/graphql",
                    github_message=messages,
                    errors=errors,
                    token=self.token_name,
                    cause=graphql_cause(errors),
                )
            )
        return dict(body.get("data") or {})

    def graphql_response(self, query: str, variables: Mapping[str, Any] | None = None) -> Response:
        """POST a GraphQL document and return GitHub's answer, errors and all.

        A spent GraphQL budget comes back as 200 with an error of type
        ``RATE_LIMITED`` (docs.github.com/en/graphql/overview/rate-limits-and-query-
        limits-for-the-graphql-api); nothing ran, so the call waits until
        ``x-ratelimit-reset`` and is sent again, within the same bounds as REST.
        Mutations are paced like REST writes (``tusk.github.pacing``).
        """
        attempt = 0
        while True:
            attempt += 1
            response = self.request(
                "POST",
                self.graphql_url,
                json={"query": query, "variables": dict(variables or {})},
                content=is_mutation(query),
                may_repeat=not is_mutation(query),
            )
            body = response.body if isinstance(response.body, dict) else {}
            errors = body.get("errors") or []
            if not graphql_rate_limited(errors):
                return response
            delay = graphql_reset_delay(response.headers, now=self._clock())
            if attempt >= self.max_attempts or delay > self.max_wait:
                raise self._scrubbed(
                    RateLimited(
                        "the GraphQL rate limit is spent and the wait budget too",
                        status=response.status,
                        method="POST",
                        path="/graphql",
                        github_message="; ".join(str(e.get("message", e)) for e in errors),
                        hint="Run again after the hour's points reset",
                    )
                )
            self.ledger.record_retry()
            self._sleep(delay)

    @property
    def graphql_url(self) -> str:
        # github.com: /graphql next to the REST root; GHES: /api/graphql next to /api/v3.
        if self.api_url.endswith("/api/v3"):
            return self.api_url[: -len("/v3")] + "/graphql"
        return self.api_url + "/graphql"

    def download(self, path: str) -> bytes:
        """The bytes behind a redirecting download (e.g. an artifact zip).

        GitHub answers ``path`` with a 302 to a short-lived pre-signed URL,
        usually on another host; that URL is fetched without the token.
        """
        response = self.request("GET", path, follow_redirects=False)
        location = response.header("location")
        if response.status not in (301, 302, 303, 307, 308) or not location:
            raise GitHubError(
                f"expected a redirect to the download, got {response.status}",
                status=response.status,
                method="GET",
                path=urlsplit(response.url).path,
            )
        target = urljoin(response.url, location)
        route = "GET (download)"
        try:
            raw = self._session.get(
                target, headers={"User-Agent": USER_AGENT}, timeout=self.timeout
            )
        except requests.RequestException as error:
            self.ledger.record(route, None)
            raise TransportError(
                f"could not fetch the download: {error}", method="GET", path=path
            ) from None
        self.ledger.record(route, raw.status_code)
        if raw.status_code >= 400:
            raise error_for("GET", path, raw.status_code, None, token=self.token_name)
        return raw.content

    def close(self) -> None:
        self._session.close()


def is_mutation(document: str) -> bool:
    """Whether a GraphQL document is a mutation (it writes and must not be repeated)."""
    return MUTATION.match(document) is not None


def network_reason(error: object) -> str:
    """What kept an answer from arriving, in the operating system's words
    ("[Errno 111] Connection refused"), not urllib3's nest of reprs."""
    text = str(error)
    found = re.search(r"\[Errno -?\d+\] [^\"')\]]+", text)
    if found:
        return found.group(0).rstrip(". ")
    if isinstance(error, requests.Timeout) or "timed out" in text:
        return "timed out"
    return type(error).__name__


def _may_have_landed(status: int | None, error: requests.RequestException | None) -> bool:
    """Whether a failed write may still have been applied by GitHub."""
    if status is not None:
        return status not in (403, 429)  # a rate limit refuses before doing anything
    if isinstance(error, requests.exceptions.ConnectTimeout):
        return False
    reason = getattr(error.args[0], "reason", None) if error and error.args else None
    return not isinstance(reason, urllib3.exceptions.NewConnectionError)


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None


def _parse_body(raw: requests.Response) -> Any:
    content_type = raw.headers.get("content-type", "")
    if not raw.content:
        return None
    if "json" in content_type:
        try:
            return raw.json()
        except ValueError:
            return None
    return None


TOKEN_ENV = {
    "bot": "bot_token",
    "dispatch": "dispatch_token",
    "agent": "agent_token",
    "read": "read_token",
}


def gateway_from_secrets(secrets: Any, which: str, **kwargs: Any) -> Gateway:
    """Build the gateway for one of Tusk's tokens (``bot``, ``dispatch``, ``agent``, ``read``).

    ``secrets`` is a ``tusk.contracts.config.Secrets``; a missing token raises a
    ``ConfigError`` naming the environment variable to set.
    """
    field_name = TOKEN_ENV[which]
    token = secrets.require(field_name)[field_name]
    return Gateway(api_url=secrets.github_api_url, token=token, token_name=which, **kwargs)
