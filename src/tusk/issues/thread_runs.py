"""A thread's runs, read from the log issues: never a local file (MISSION C1, C3).

Each agent run's log issue names its thread in its title (A4:
``[Agent Log] owner/name #123 — YYYY-MM-DD HH:MM``; issues, pull requests and
discussions share a repository's numbers) and, since build-context writes it, in
its job marker (``thread``: ``owner/name#N``); it carries the job marker that
makes it a run (``tusk.issues.log_issue.parse_log_issue``: the bot's issues only).

``earlier_runs`` is the one pure answer to "which runs came before this one on
this thread", oldest first: the bot's issues numbered below this run's own
claim, without failure records and claims released as duplicates.
``list_log_issues`` is its I/O: the bot's log issues, newest first, a bounded
number of pages.

``in_flight`` answers "which run holds this thread now": a run is in flight on
its thread while its log issue is open, is the bot's, is no failure record and
carries no ``bug`` label (the write-up closes it when the run ends; a run that
failed keeps it open under ``bug`` and holds the thread no longer), and is not
past its time budget (``tusk.issues.stale_runs``). The lowest number wins, as
for claims (``tusk.issues.log_issue``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tusk.contracts.config import Settings
from tusk.github.gateway import Gateway
from tusk.issues import claims
from tusk.issues.log_issue import LogIssue, parse_log_issue
from tusk.issues.stale_runs import is_stale
from tusk.text.markers import first_marker

_TITLE_THREAD = re.compile(r"^\[Agent Log\] (?P<repo>[^\s#]+) #(?P<number>[0-9]+)\b")
MAX_PAGES = 5  # of 100 log issues each: how far back a thread's runs are looked for


def thread_of(item: dict[str, Any]) -> tuple[str, int] | None:
    """The (repository, number) a log issue's title names, or None."""
    match = _TITLE_THREAD.match(str(item.get("title") or ""))
    if match is None:
        return None
    return match.group("repo").lower(), int(match.group("number"))


def earlier_runs(
    items: Iterable[dict[str, Any]],
    settings: Settings,
    *,
    repo: str,
    number: int,
    before: int,
) -> list[LogIssue]:
    """Pure: the runs on ``repo`` #``number`` claimed before log issue ``before``, oldest
    first, one per job (its first claim)."""
    found: dict[str, LogIssue] = {}
    for item in items:
        # Only the bot's own: anyone who may open an issue in the control repository could
        # type a log issue's title and marker.
        if str((item.get("user") or {}).get("login") or "").lower() != settings.bot.lower():
            continue
        issue = parse_log_issue(item, settings)
        if issue is None or issue.failure or issue.state_reason == "duplicate":
            continue
        if issue.number >= before or thread_of(item) != (repo.lower(), number):
            continue
        if issue.jobid not in found or issue.number < found[issue.jobid].number:
            found[issue.jobid] = issue
    return sorted(found.values(), key=lambda issue: issue.number)


def list_log_issues(gateway: Gateway, settings: Settings) -> Iterator[dict[str, Any]]:
    """The bot's log issues in the control repository, newest first, at most
    ``MAX_PAGES`` pages (listings lag a little: a run seconds old may be missing)."""
    params = {
        "labels": settings.labels.workflow,
        "creator": settings.bot,
        "state": "all",
        "sort": "created",
        "direction": "desc",
    }
    path = f"/repos/{settings.control_repo}/issues"
    for index, item in enumerate(gateway.paginate(path, params=params)):
        if index >= MAX_PAGES * 100:
            return
        yield item


@dataclass(frozen=True)
class RunInFlight:
    number: int
    url: str
    jobid: str
    requester: str | None


def thread_in_marker(item: dict[str, Any]) -> str | None:
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
        if thread_in_marker(item) != thread.lower() or (
            now is not None and is_stale(item, settings, now)
        ):
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
