"""The bot's notifications: a conditional fetch, and marking a thread read (MISSION P1).

The first page is asked for with ``If-Modified-Since`` so an idle poll is
one request answered 304, which costs no rate limit; later pages follow
``Link``. Threads are marked read only after every trigger they carried was
dispatched, and only as they were listed: a mention posted while we were
dispatching must keep its thread unread for the next poll (``plan_marks``).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tusk.github.gateway import Gateway
from tusk.poller.core import NotificationsResponse, Thread

PER_PAGE = 50  # the notifications endpoint's maximum


def fetch(gateway: Gateway, *, if_modified_since: str | None) -> NotificationsResponse:
    """All unread notification threads, or a 304 when nothing changed."""
    started = time.monotonic()
    first = gateway.conditional_get(
        "/notifications", params={"per_page": PER_PAGE}, if_modified_since=if_modified_since
    )
    interval = _poll_interval(first.header("x-poll-interval"))
    listed_at = listing_second(gateway.server_time, time.monotonic() - started)
    if first.status == 304:
        return NotificationsResponse(
            status=304, threads=(), last_modified=if_modified_since, poll_interval=interval
        )
    items: list[Any] = list(first.body or [])
    url = first.links.get("next")
    while url is not None:
        page = gateway.request("GET", url)
        items.extend(page.body or [])
        url = page.links.get("next")
    return NotificationsResponse(
        status=first.status,
        threads=tuple(items),
        last_modified=first.header("last-modified"),
        poll_interval=interval,
        listed_at=listed_at,
    )


def _poll_interval(value: str | None) -> float | None:
    if value and re.fullmatch(r"[0-9]+", value.strip()):
        return float(value)
    return None


# --------------------------------------------------------------------------- marking read


@dataclass(frozen=True)
class Mark:
    """One "mark as read" request: every unread thread (of ``repo``, or of the whole
    inbox when None) last updated at or before ``cutoff``; ``threads`` are the listed
    ones it covers."""

    repo: str | None
    cutoff: datetime
    threads: tuple[Thread, ...]


def plan_marks(
    listed: Sequence[Thread], failed: Collection[str]
) -> tuple[list[Mark], list[Thread]]:
    """Pure: the requests that mark the handled threads read, and the threads left unread.

    Each request carries ``last_read_at``: GitHub marks read only what was last
    updated at or before it ("Anything updated since this time will not be marked
    as read"), so a mention that arrives while this poll works moves its thread
    past the cutoff and keeps it unread for the next poll, with no request to
    check first. When every thread was handled one request covers the inbox, up
    to the newest thread listed. Otherwise each repository gets its own request,
    cut off just before its oldest failed thread so that thread stays unread;
    handled threads of that repository updated later stay unread too, and the
    next poll handles them again under the same job ids.
    """
    if not listed:
        return [], []
    if not failed:
        return [Mark(None, max(t.updated_at for t in listed), tuple(listed))], []
    by_repo: dict[str, list[Thread]] = {}
    for thread in listed:
        by_repo.setdefault(thread.repo, []).append(thread)
    marks: list[Mark] = []
    kept: list[Thread] = []
    for repo, threads in by_repo.items():
        failures = [t.updated_at for t in threads if t.id in failed]
        if failures:
            cutoff = min(failures) - timedelta(seconds=1)
        else:
            cutoff = max(t.updated_at for t in threads)
        covered = tuple(t for t in threads if t.id not in failed and t.updated_at <= cutoff)
        kept += [t for t in threads if t not in covered]
        if covered:
            marks.append(Mark(repo, cutoff, covered))
    return marks, kept


def listing_second(date: datetime | None, round_trip: float) -> datetime | None:
    """Pure: the earliest whole second in which GitHub can have built a listing that it
    answered with the ``Date`` header ``date`` after ``round_trip`` seconds.

    ``Date`` has whole seconds and is stamped when the answer goes out, after the
    listing was built: an answer that crossed a second boundary says second S+1 for
    a listing built in second S. The listing was built after the request was sent,
    so at most ``round_trip`` before ``Date``."""
    if date is None:
        return None
    return date.replace(microsecond=0) - timedelta(seconds=math.ceil(max(round_trip, 0.0)))


def too_fresh(listed: Sequence[Thread], listed_at: datetime | None) -> set[str]:
    """Pure: threads last updated in a second in which GitHub may have built the listing
    (``listed_at``: ``listing_second``) or later. ``updated_at`` has whole seconds, so a
    mention landing later in that second would not move the thread past a
    ``last_read_at`` cutoff: such a thread is left unread for the next poll (which
    handles it again under the same job ids) rather than risk it."""
    if listed_at is None:
        return set()
    second = listed_at.replace(microsecond=0)
    return {thread.id for thread in listed if thread.updated_at >= second}


def send_mark(gateway: Gateway, mark: Mark) -> None:
    """PUT the mark; GitHub answers 205, or 202 when it finishes in the background."""
    path = "/notifications" if mark.repo is None else f"/repos/{mark.repo}/notifications"
    stamp = mark.cutoff.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    gateway.request("PUT", path, json={"last_read_at": stamp})
