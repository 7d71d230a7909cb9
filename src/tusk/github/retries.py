"""When GitHub asks for patience, and for how long: the gateway's retry waits. Pure.

GitHub's guidance, as ``retry_delay`` follows it: honour ``Retry-After``;
when the primary rate limit is spent, wait for ``x-ratelimit-reset``; on a
secondary limit without a header, wait at least a minute, growing; back off
exponentially on a 5xx or a failed connection. GraphQL says a spent budget
in its answer (``RATE_LIMITED``), not in the status.
"""

from __future__ import annotations

import email.utils
from collections.abc import Mapping
from typing import Any

from tusk.github.errors import RETRYABLE_SERVER_STATUSES, github_message


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
