"""The GitHub gateway: the only code that speaks GitHub's REST and GraphQL APIs.

All of Tusk's GitHub API traffic goes through ``Gateway``: REST with ``Link``
pagination, conditional GETs (``If-Modified-Since`` / ``ETag`` → 304) and
GraphQL, spoken over ``requests`` rather than PyGithub (kept to the tests; the
measured reasons are in ARCHITECTURE.md). Every request is retried within
bounds when GitHub asks for patience (``Retry-After``, an exhausted rate limit,
a secondary limit, 5xx), and counted per route in a ``RequestLedger`` that
benchmarks read (304s apart).

Decisions (how long to wait, which error a response is) are pure functions
below the ``Gateway`` class so they can be tested without a network.
"""

from __future__ import annotations

import email.utils
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypedDict
from urllib.parse import urljoin, urlsplit

import requests
import urllib3
from pydantic import SecretStr

from tusk.errors import TuskError
from tusk.github.pacing import ContentPacer

USER_AGENT = "tusk-agent-platform"
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
MUTATION = re.compile(r"^\s*(?:#[^\n]*\n\s*)*mutation\b")  # comments may come first
API_VERSION = "2022-11-28"
RETRYABLE_SERVER_STATUSES = frozenset({500, 502, 503, 504})


# --------------------------------------------------------------------------- errors


ErrorCause = Literal[
    "auth", "permission", "not_found", "outage", "rate_limit", "invalid", "conflict", "unknown"
]

# Tusk's four tokens and the environment variables that hold them.
TOKEN_ENV_NAMES: dict[str, str] = {
    "bot": "TUSK_BOT_TOKEN",
    "dispatch": "TUSK_DISPATCH_TOKEN",
    "agent": "TUSK_AGENT_TOKEN",
    "read": "TUSK_READ_TOKEN",
}


def token_label(name: str) -> str:
    """``the agent token (TUSK_AGENT_TOKEN)``: which token, by the name people set it under."""
    if not name:
        return "the token"
    env = TOKEN_ENV_NAMES.get(name)
    return f"the {name} token ({env})" if env else f"the {name} token"


class GitHubError(TuskError):
    """A GitHub request failed. Says which request, with which token, what GitHub said,
    whether it is an outage or a token problem (``cause``), and what to do.

    ``may_have_landed`` is True for a write whose failure does not prove it was not
    applied (a 5xx, a timeout, a reset connection): look for it before repeating it.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        method: str = "",
        path: str = "",
        github_message: str = "",
        errors: list[Any] | None = None,
        hint: str = "",
        token: str = "",
        cause: ErrorCause = "unknown",
        may_have_landed: bool = False,
    ) -> None:
        self.status = status
        self.method = method
        self.path = path
        self.github_message = github_message
        self.errors = errors or []
        self.hint = hint
        self.token = token
        self.cause: ErrorCause = cause
        self.may_have_landed = may_have_landed
        text = f"{method} {path}: {message}" if method else message
        if github_message:
            text += f" (GitHub said: {github_message})"
        self.title = text
        if hint:
            text += f". {hint}"
        super().__init__(text)

    @property
    def is_outage(self) -> bool:
        """GitHub failed or could not be reached: nothing is wrong with the token."""
        return self.cause == "outage"


class ErrorContext(TypedDict):
    """What every ``GitHubError`` of a final response carries: which request, which token."""

    status: int
    method: str
    path: str
    github_message: str
    token: str


class TransportError(GitHubError):
    """GitHub could not be reached (connection refused, dropped, timed out)."""


class Unauthorized(GitHubError):
    """401: the token is missing, expired or revoked."""


class Forbidden(GitHubError):
    """403: the token lacks a right (scope, push access, ...)."""


class NotFound(GitHubError):
    """404: it does not exist, or the token may not see it."""


class Conflict(GitHubError):
    """409: e.g. a merge conflict or an empty repository."""


class ValidationFailed(GitHubError):
    """422: GitHub refused the request body."""


class RateLimited(GitHubError):
    """403/429 for a rate limit that did not clear within the retry budget."""


class ServerError(GitHubError):
    """5xx that did not clear within the retry budget."""


# --------------------------------------------------------------------------- pure decisions


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


def route_of(method: str, path: str) -> str:
    """Normalise a request path into a route template for counting.

    ``/repos/alice/widgets/issues/12/comments`` → ``GET /repos/{owner}/{repo}/issues/{n}/comments``.
    """
    parts = [p for p in urlsplit(path).path.split("/") if p]
    if parts[:1] == ["api"] and parts[1:2] == ["v3"]:  # GitHub Enterprise Server prefix
        parts = parts[2:]
    out = []
    for index, part in enumerate(parts):
        if index in (1, 2) and parts[0] == "repos":
            out.append("{owner}" if index == 1 else "{repo}")
        elif index == 1 and parts[0] in ("users", "orgs"):
            out.append("{name}")
        elif part.isdigit():
            out.append("{n}")
        else:
            out.append(part)
    return f"{method.upper()} /" + "/".join(out)


def github_message(body: Any) -> str:
    if isinstance(body, Mapping):
        return str(body.get("message", ""))
    return ""


def retry_delay(
    status: int | None,
    headers: Mapping[str, str],
    body: Any,
    *,
    attempt: int,
    now: float,
) -> float | None:
    """Seconds to wait before retrying, or None when the response is final.

    ``status`` None means the connection failed. ``attempt`` counts from 1.
    Follows GitHub's guidance: honour ``retry-after``; when the primary limit
    is spent wait for ``x-ratelimit-reset``; on a secondary limit without a
    header wait at least a minute, growing; back off exponentially on 5xx.
    """
    backoff = min(2.0 ** (attempt - 1), 30.0)
    if status is None:
        return backoff
    lowered = {k.lower(): v for k, v in headers.items()}
    retry_after = retry_after_seconds(lowered.get("retry-after"), now=now)
    if status in RETRYABLE_SERVER_STATUSES:
        # A 503 may say when to come back; otherwise back off exponentially.
        return retry_after if retry_after is not None else backoff
    if status not in (403, 429):
        return None
    if retry_after is not None:
        return retry_after
    if lowered.get("x-ratelimit-remaining") == "0":
        try:
            return max(float(lowered.get("x-ratelimit-reset", "0")) - now, 0.0) + 1.0
        except ValueError:
            return 60.0
    if "secondary rate limit" in github_message(body).lower() or status == 429:
        return 60.0 * attempt
    return None  # an ordinary 403: missing rights, not a limit


def retry_after_seconds(value: str | None, *, now: float) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date (RFC 9110); None if absent."""
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 60.0  # unreadable: wait the minute GitHub asks for secondary limits
    return max(when.timestamp() - now, 0.0)


def error_for(method: str, path: str, status: int, body: Any, *, token: str = "") -> GitHubError:
    """Map a final error response to the one exception that says what to do.

    The message names the token (``token`` is its name: bot, dispatch, agent,
    read) and says whether the failure is the token's or GitHub's."""
    said = github_message(body)
    errors = body.get("errors", []) if isinstance(body, Mapping) else []
    who = token_label(token)
    env = TOKEN_ENV_NAMES.get(token)
    secret = f"the secret {env}" if env else "the token"
    common = ErrorContext(status=status, method=method, path=path, github_message=said, token=token)
    if status == 401:
        return Unauthorized(
            f"GitHub refused {who}: it is wrong, expired or revoked",
            hint=f"Create a new token and update {secret}. This is not an outage",
            cause="auth",
            **common,
        )
    if status in (403, 429) and ("rate limit" in said.lower() or status == 429):
        return RateLimited(
            f"{who} is rate limited and the wait budget is spent",
            hint="Run again later; lower the polling frequency if this repeats. "
            "The token's permissions are fine",
            cause="rate_limit",
            **common,
        )
    if status == 403:
        return Forbidden(
            f"{who} may not do this: a permission problem, not an outage",
            hint=f"Give {secret} the needed scope (e.g. repo, delete_repo, workflow) "
            "or the account push access",
            cause="permission",
            **common,
        )
    if status == 404:
        return NotFound(
            f"not found, or {who} cannot see it",
            hint="Check the name, and that the token's account can see this repository",
            cause="not_found",
            **common,
        )
    if status == 409:
        return Conflict("conflict", cause="conflict", **common)
    if status == 422:
        return ValidationFailed(
            "GitHub refused the request",
            errors=errors,
            hint=f"Details: {errors}" if errors else "",
            cause="invalid",
            **common,
        )
    if status in RETRYABLE_SERVER_STATUSES:
        return ServerError(
            f"GitHub kept failing ({status}): an outage on GitHub's side, not a problem with {who}",
            hint="Run again later (https://www.githubstatus.com)",
            cause="outage",
            may_have_landed=method.upper() != "GET",
            **common,
        )
    if status >= 500:  # e.g. 501: retrying will not help
        return ServerError(
            f"GitHub cannot serve this request ({status})",
            cause="outage",
            may_have_landed=method.upper() != "GET",
            **common,
        )
    return GitHubError(f"unexpected status {status}", **common)


def is_content_request(method: str, path: str) -> bool:
    """Writes count as content creation, except marking notifications (the inbox) and
    GraphQL, which ``Gateway.graphql`` classifies by its document."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:  # GitHub Enterprise Server: /api/v3/..., /api/graphql
        parts = parts[2:] if parts[1:2] == ["v3"] else parts[1:]
    if parts[:1] in (["notifications"], ["graphql"]):
        return False
    return method.upper() in WRITE_METHODS


def graphql_rate_limited(errors: list[Any]) -> bool:
    """Whether GraphQL errors say the primary budget is spent (nothing ran)."""
    return any(isinstance(e, Mapping) and e.get("type") == "RATE_LIMITED" for e in errors)


def graphql_reset_delay(headers: Mapping[str, str], *, now: float) -> float:
    """Seconds until ``x-ratelimit-reset`` (plus one), or a minute when it is missing."""
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        return max(float(lowered["x-ratelimit-reset"]) - now, 0.0) + 1.0
    except (KeyError, ValueError):
        return 60.0


# --------------------------------------------------------------------------- accounting


@dataclass
class RequestLedger:
    """Requests sent, per route; 304 answers are counted apart (they are free)."""

    by_route: Counter[str] = field(default_factory=Counter)
    not_modified: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record_retry(self) -> None:
        with self._lock:
            self.retries += 1

    def record(self, route: str, status: int | None) -> None:
        with self._lock:
            if status == 304:
                self.not_modified[route] += 1
            else:
                self.by_route[route] += 1

    @property
    def total(self) -> int:
        return sum(self.by_route.values())

    @property
    def total_not_modified(self) -> int:
        return sum(self.not_modified.values())

    def reset(self) -> None:
        with self._lock:
            self.by_route.clear()
            self.not_modified.clear()
            self.retries = 0


# --------------------------------------------------------------------------- the gateway


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
            f"or an outage, not a problem with {token_label(self.token_name)} ({answer})",
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
            error.args = tuple(str(arg).replace(secret, "***") for arg in error.args)
            error.github_message = error.github_message.replace(secret, "***")
            error.title = error.title.replace(secret, "***")
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


def graphql_cause(errors: list[Any]) -> ErrorCause:
    """What kind of failure GraphQL's ``errors[].type`` values describe."""
    types = {str(e.get("type", "")) for e in errors if isinstance(e, Mapping)}
    if "RATE_LIMITED" in types:
        return "rate_limit"
    if "FORBIDDEN" in types or "INSUFFICIENT_SCOPES" in types:
        return "permission"
    if "NOT_FOUND" in types:
        return "not_found"
    return "invalid" if types - {""} else "unknown"


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
