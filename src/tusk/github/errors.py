"""The GitHub edge's errors: which request failed, with which token, and what to do.

Every failed GitHub request raises one ``GitHubError`` subclass (``error_for``
maps a final response to it): it names the request and the token by the
variable people set it under, says whether GitHub or the token failed
(``cause``), and, for a write, whether it may have landed anyway. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from tusk.errors import TuskError

RETRYABLE_SERVER_STATUSES = frozenset({500, 502, 503, 504})

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


def github_message(body: Any) -> str:
    if isinstance(body, Mapping):
        return str(body.get("message", ""))
    return ""


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
