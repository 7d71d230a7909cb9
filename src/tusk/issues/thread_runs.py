"""Which run holds a thread (MISSION C1): read from the log issues, never a local file.

build-context writes the thread's key (``owner/name#N``) into the job marker
of each agent run's log issue. A run is in flight on its thread while its log
issue is open, is the bot's, is no failure record and carries no ``bug``
label: the write-up closes it when the run ends, and a run that failed keeps
it open under ``bug`` (it holds the thread no longer). The lowest number wins,
as for claims (``tusk.issues.log_issue``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tusk.contracts.config import Settings
from tusk.github.gateway import Gateway
from tusk.issues import claims
from tusk.issues.log_issue import parse_log_issue
from tusk.issues.stale_runs import is_stale
from tusk.text.markers import first_marker


@dataclass(frozen=True)
class RunInFlight:
    number: int
    url: str
    jobid: str
    requester: str | None


def thread_of(item: dict[str, Any]) -> str | None:
    marker = first_marker(item.get("body"), "job") or {}
    thread = marker.get("thread")
    return thread.lower() if isinstance(thread, str) else None


def in_flight(
    items: Iterable[dict[str, Any]], settings: Settings, thread: str, now: datetime | None = None
) -> RunInFlight | None:
    """Pure: the run holding ``thread`` among listed log issues, or None. With ``now``, a
    run past its time budget and grace holds nothing (``tusk.issues.stale_runs``)."""
    found: list[RunInFlight] = []
    bug = settings.labels.bug.lower()
    for item in items:
        if item.get("state") != "open" or not claims.by_bot(item, settings.bot):
            continue
        if thread_of(item) != thread.lower() or (now is not None and is_stale(item, settings, now)):
            continue
        labels = {str(label.get("name") or "").lower() for label in item.get("labels") or []}
        issue = parse_log_issue(item, settings)
        if issue is None or issue.failure or bug in labels:
            continue
        requester = (first_marker(item.get("body"), "job") or {}).get("requester")
        found.append(
            RunInFlight(
                issue.number,
                issue.url,
                issue.jobid,
                requester if isinstance(requester, str) else None,
            )
        )
    return min(found, key=lambda run: run.number) if found else None


def open_runs(gateway: Gateway, settings: Settings) -> list[dict[str, Any]]:
    """The bot's open log issues: one listing."""
    params = {
        "labels": settings.labels.workflow,
        "state": "open",
        "creator": settings.bot,
        "sort": "created",
        "direction": "asc",
    }
    return list(gateway.paginate(f"/repos/{settings.control_repo}/issues", params=params))


def run_in_flight(
    gateway: Gateway, settings: Settings, thread: str, now: datetime | None = None
) -> RunInFlight | None:
    """The run in flight on ``thread``, from one listing of the bot's open log issues."""
    return in_flight(open_runs(gateway, settings), settings, thread, now)


def holder_before(
    gateway: Gateway,
    settings: Settings,
    thread: str,
    number: int,
    *,
    sleep: Callable[[float], None],
    now: datetime | None = None,
) -> RunInFlight | None:
    """The run in flight on ``thread`` that claimed before log issue ``number``, if any.

    The poller's look is a listing, which may lag; this is the claim's own: the bot's
    open log issues listed, and the issues just below ``number`` read by their own URLs
    back to the lease (``claims.issues_below``), as a job's claim is decided. Two runs
    sent for one thread (two pollers, a listing that lagged, ``act`` ignoring
    ``concurrency:``) agree on which holds it: the lower number."""
    control = settings.control_repo
    own = claims.read_number(gateway, control, number).item
    if own is None:
        return None
    start = claims.window_start(own, settings.limits.claim_lease_minutes)
    recent = claims.recent_issues(gateway, control)
    scanned = [
        slot.item
        for slot in claims.issues_below(
            gateway, control, number, since=start, sleep=sleep, listed=recent
        )
        if slot.item is not None
    ]
    params = {"labels": settings.labels.workflow, "state": "open", "creator": settings.bot}
    listed = gateway.paginate(f"/repos/{control}/issues", params=params)
    items = [item for item in [*scanned, *listed] if int(item.get("number") or 0) < number]
    return in_flight(items, settings, thread, now)
