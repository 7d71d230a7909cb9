"""GitHub's secondary rate limits, per user, in the local GitHub's own time.

Source: docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
("About secondary rate limits") and the GraphQL twin,
docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api:

- no more than 100 concurrent requests (REST and GraphQL share the limit);
- no more than 900 points a minute on REST and 2,000 on GraphQL: a GET, HEAD or
  OPTIONS costs 1 point, a POST, PATCH, PUT or DELETE 5; a GraphQL query 1, a
  mutation 5;
- "in general, no more than 80 content-generating requests per minute and no
  more than 500 content-generating requests per hour", some endpoints lower;
- past a limit GitHub answers 403 or 429, with ``retry-after`` when it knows
  how long to wait ("you should not retry your request until after that many
  seconds has elapsed").

GitHub does not list which requests generate content, so the local GitHub
counts every write except marking notifications (a POST, PATCH, PUT or
DELETE; a GraphQL mutation): stricter than GitHub wherever GitHub is vague.
Content creation is answered 403, the point limits 429, so callers meet both.
Refused requests are not counted. The limits are on unless a scenario turns
them off (``settings: {secondary_limits: false}``) and can be lowered there
(``secondary_limits: {content_per_minute: 3}``) so a test can reach them with
a handful of requests.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

CONTENT_MESSAGE = (
    "You have exceeded a secondary rate limit and have been temporarily blocked from "
    "content creation. Please retry your request again later."
)
POINTS_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
CONCURRENCY_MESSAGE = POINTS_MESSAGE
DOCS = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
MINUTE = 60.0
HOUR = 3600.0
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


@dataclass
class Limits:
    """The figures; a scenario may lower them (``settings.secondary_limits``)."""

    enabled: bool = True
    content_per_minute: int = 80
    content_per_hour: int = 500
    rest_points_per_minute: int = 900
    graphql_points_per_minute: int = 2000
    concurrent: int = 100

    @classmethod
    def problems(cls, value: Any) -> list[str]:
        """What is wrong with a scenario's ``settings.secondary_limits`` (empty: fine)."""
        if not isinstance(value, dict):
            return []
        where = "settings.secondary_limits"
        known = {f for f in cls.__dataclass_fields__ if f != "enabled"}
        found = []
        for key, item in value.items():
            if key == "enabled":
                if not isinstance(item, bool):
                    found.append(f"{where}.enabled: expected true or false")
            elif key not in known:
                found.append(f"{where}.{key}: unknown key (known: {', '.join(sorted(known))})")
            elif not isinstance(item, int) or isinstance(item, bool) or item < 1:
                found.append(f"{where}.{key}: expected a whole number of at least 1")
        return found

    @classmethod
    def from_setting(cls, value: Any) -> Limits:
        if value is None or value is True:
            return cls()
        if value is False:
            return cls(enabled=False)
        known = {k: int(v) for k, v in dict(value).items() if k != "enabled"}
        return cls(enabled=bool(dict(value).get("enabled", True)), **known)


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str
    retry_after: int

    def headers(self) -> dict[str, str]:
        return {"retry-after": str(self.retry_after)}


@dataclass
class _User:
    content: deque[float] = field(default_factory=deque)  # times of content requests (1 h)
    rest: deque[tuple[float, int]] = field(default_factory=deque)  # (time, points), 1 min
    graphql: deque[tuple[float, int]] = field(default_factory=deque)
    in_flight: int = 0


def _wait(oldest: float, window: float, now: float) -> int:
    return max(1, math.ceil(oldest + window - now))


class SecondaryLimits:
    """Counts and refuses; the server calls it under its state lock."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._users: dict[str, _User] = {}

    def _user(self, login: str) -> _User:
        return self._users.setdefault(login.lower(), _User())

    @staticmethod
    def _prune(user: _User, now: float) -> None:
        while user.content and user.content[0] <= now - HOUR:
            user.content.popleft()
        for points in (user.rest, user.graphql):
            while points and points[0][0] <= now - MINUTE:
                points.popleft()

    def check(
        self, login: str, *, now: float, points: int, content: bool, graphql: bool = False
    ) -> Refusal | None:
        """Count one request by ``login`` (not counted when refused)."""
        if not self.limits.enabled or not login:
            return None
        user = self._user(login)
        self._prune(user, now)
        limits = self.limits
        if user.in_flight > limits.concurrent:
            return Refusal(403, CONCURRENCY_MESSAGE, 1)
        if content:
            minute = [t for t in user.content if t > now - MINUTE]
            if len(minute) >= limits.content_per_minute:
                return Refusal(403, CONTENT_MESSAGE, _wait(minute[0], MINUTE, now))
            if len(user.content) >= limits.content_per_hour:
                return Refusal(403, CONTENT_MESSAGE, _wait(user.content[0], HOUR, now))
        window = user.graphql if graphql else user.rest
        budget = limits.graphql_points_per_minute if graphql else limits.rest_points_per_minute
        spent = sum(p for _, p in window)
        if spent + points > budget:
            # Wait until enough of the minute's points have aged out.
            freed, wait_until = 0, now
            for at, cost in window:
                freed += cost
                wait_until = at + MINUTE
                if spent - freed + points <= budget:
                    break
            return Refusal(429, POINTS_MESSAGE, max(1, math.ceil(wait_until - now)))
        if content:
            user.content.append(now)
        window.append((now, points))
        return None

    def enter(self, login: str) -> None:
        if login:
            self._user(login).in_flight += 1

    def leave(self, login: str) -> None:
        if login:
            user = self._user(login)
            user.in_flight = max(user.in_flight - 1, 0)


def rest_points(method: str) -> int:
    return 5 if method.upper() in WRITE_METHODS else 1
