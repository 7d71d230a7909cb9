"""Which run holds a thread (MISSION C1): read from the log issues, never a local file.

build-context writes the thread's key (``owner/name#N``) into the job marker
of each agent run's log issue. A run is in flight on its thread while its log
issue is open, is the bot's, is no failure record and carries no ``bug``
label: the write-up closes it when the run ends, and a run that failed keeps
it open under ``bug`` (it holds the thread no longer). The lowest number wins,
as for claims (``tusk.issues.log_issue``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tusk.contracts.config import Settings
from tusk.github.gateway import Gateway
from tusk.issues import claims
from tusk.issues.log_issue import parse_log_issue
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
    items: Iterable[dict[str, Any]], settings: Settings, thread: str
) -> RunInFlight | None:
    """Pure: the run holding ``thread`` among listed log issues, or None."""
    found: list[RunInFlight] = []
    bug = settings.labels.bug.lower()
    for item in items:
        if item.get("state") != "open" or not claims.by_bot(item, settings.bot):
            continue
        if thread_of(item) != thread.lower():
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


def run_in_flight(gateway: Gateway, settings: Settings, thread: str) -> RunInFlight | None:
    """The run in flight on ``thread``: one listing of the bot's open log issues."""
    params = {
        "labels": settings.labels.workflow,
        "state": "open",
        "creator": settings.bot,
        "sort": "created",
        "direction": "asc",
    }
    items = gateway.paginate(f"/repos/{settings.control_repo}/issues", params=params)
    return in_flight(items, settings, thread)
