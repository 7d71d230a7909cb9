"""The earlier runs on one thread, read from the log issues (MISSION C3).

Each agent run's log issue names its thread in its title (A4:
``[Agent Log] owner/name #123 — YYYY-MM-DD HH:MM``; issues, pull requests and
discussions share a repository's numbers) and carries the job marker that makes
it a run (``tusk.issues.log_issue.parse_log_issue``: the bot's issues only).
``earlier_runs`` is the one pure answer to "which runs came before this one on
this thread", oldest first: the bot's issues numbered below this run's own
claim, without failure records and claims released as duplicates. ``list_log_issues``
is its I/O: the bot's log issues, newest first, a bounded number of pages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from tusk.contracts.config import Settings
from tusk.github.gateway import Gateway
from tusk.issues.log_issue import LogIssue, parse_log_issue

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
