"""The bot's notifications: a conditional fetch, and marking a thread read (MISSION P1).

The first page is asked for with ``If-Modified-Since`` so an idle poll is
one request answered 304, which costs no rate limit; later pages follow
``Link``. A thread is marked read only after every trigger it carried was
dispatched, and only if it did not change meanwhile: a mention posted while
we were dispatching must keep the thread unread for the next poll.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime
from typing import Any

from tusk.poller.core import NotificationsResponse, Thread, parse_time

from tusk.github import Gateway, next_link

log = logging.getLogger(__name__)

PER_PAGE = 50  # the notifications endpoint's maximum


def fetch(gateway: Gateway, *, if_modified_since: str | None) -> NotificationsResponse:
    """All unread notification threads, or a 304 when nothing changed."""
    first = gateway.conditional_get(
        "/notifications", params={"per_page": PER_PAGE}, if_modified_since=if_modified_since
    )
    interval = _poll_interval(first.header("x-poll-interval"))
    if first.status == 304:
        return NotificationsResponse(
            status=304, threads=(), last_modified=if_modified_since, poll_interval=interval
        )
    items: list[Any] = list(first.body or [])
    url = next_link(first.header("link"))
    while url is not None:
        page = gateway.request("GET", url)
        items.extend(page.body or [])
        url = next_link(page.header("link"))
    return NotificationsResponse(
        status=first.status,
        threads=tuple(items),
        last_modified=first.header("last-modified"),
        poll_interval=interval,
    )


def _poll_interval(value: str | None) -> float | None:
    if value and re.fullmatch(r"[0-9]+", value.strip()):
        return float(value)
    return None


def http_date(moment: datetime) -> str:
    return format_datetime(moment, usegmt=True)


@dataclass(frozen=True)
class MarkResult:
    marked: bool
    reason: str = ""


def mark_read(gateway: Gateway, thread: Thread) -> MarkResult:
    """Mark ``thread`` read unless it changed after the listing we acted on."""
    current = gateway.conditional_get(
        f"/notifications/threads/{thread.id}", if_modified_since=http_date(thread.updated_at)
    )
    if current.status != 304 and isinstance(current.body, dict):
        updated = parse_time(current.body.get("updated_at"))
        if updated is not None and updated > thread.updated_at:
            log.info("thread %s changed while we worked; left unread for the next poll", thread.id)
            return MarkResult(False, "changed while dispatching")
    gateway.request("PATCH", f"/notifications/threads/{thread.id}")
    return MarkResult(True)
