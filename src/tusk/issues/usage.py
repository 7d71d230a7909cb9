"""The runs of the last hours, read from their log issues (limits across runs, usage).

A run's log issue holds everything the limits count, on GitHub and nowhere
else: its creation time is the run's start; its job marker names the target
repository and, for an agent run, the requester (build-context writes it;
go-away log issues carry none and are not runs); the bot's progress comment
carries a hidden ``usage`` marker with the model spend so far, rewritten at
most every 30 s while the agent works and once more when it ends. Only the
bot's comments and the control repository's issues are trusted
(``parse_log_issue``), so no one can lower the count by typing a marker.

``read_runs`` lists the control repository's log issues created in the window
(one listing, then one comment listing per run for its spend, only when a
spend cap is set). ``before`` keeps only issues numbered below a claim: the
re-check of a run counts exactly the runs that claimed before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.limits import RunRecord
from tusk.github.gateway import Gateway
from tusk.issues.log_issue import LogIssue, parse_log_issue
from tusk.text.markers import first_marker, render_marker


def usage_marker(cost_usd: float) -> str:
    """The hidden marker a progress comment carries: the run's spend so far."""
    return render_marker("usage", {"cost_usd": round(cost_usd, 6)})


def requester_of(item: dict[str, Any]) -> str | None:
    marker = first_marker(item.get("body"), "job") or {}
    requester = marker.get("requester")
    return requester if isinstance(requester, str) and requester else None


def spend_of(comments: Iterator[dict[str, Any]], *, bot: str, jobid: str) -> float:
    """Pure: the spend the bot's progress comments of ``jobid`` report (a run that took
    a claim over has a progress comment of its own; each was metered apart)."""
    total = 0.0
    for comment in comments:
        author = str((comment.get("user") or {}).get("login") or "")
        body = str(comment.get("body") or "")
        progress = first_marker(body, "progress")
        if author.lower() != bot.lower() or not progress or progress.get("jobid") != jobid:
            continue
        usage = first_marker(body, "usage") or {}
        cost = usage.get("cost_usd")
        if isinstance(cost, int | float) and cost >= 0:
            total += float(cost)
    return total


def run_issues(
    gateway: Gateway, settings: Settings, *, since: datetime
) -> Iterator[tuple[LogIssue, str]]:
    """Each agent run's log issue created after ``since``, with its requester."""
    params = {
        "labels": settings.labels.workflow,
        "state": "all",
        "sort": "created",
        "direction": "asc",
        "since": since.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    for item in gateway.paginate(f"/repos/{settings.control_repo}/issues", params=params):
        issue = parse_log_issue(item, settings)
        requester = requester_of(item)
        if issue is None or requester is None or issue.failure:
            continue
        if issue.state_reason == "duplicate" or issue.created_at is None:
            continue
        if issue.created_at > since:
            yield issue, requester


def read_runs(
    gateway: Gateway,
    settings: Settings,
    *,
    now: datetime,
    hours: float | None = None,
    before: int | None = None,
    with_spend: bool | None = None,
) -> list[RunRecord]:
    """The runs started in the ``hours`` (the usage window) before ``now``."""
    hours = settings.limits.usage_window_hours if hours is None else hours
    if with_spend is None:
        with_spend = settings.limits.daily_budget_usd is not None
    records = []
    for issue, requester in run_issues(gateway, settings, since=now - timedelta(hours=hours)):
        if before is not None and issue.number >= before:
            continue
        cost = None
        if with_spend:
            path = f"/repos/{settings.control_repo}/issues/{issue.number}/comments"
            cost = spend_of(gateway.paginate(path), bot=settings.bot, jobid=issue.jobid)
        assert issue.created_at is not None
        records.append(
            RunRecord(issue.jobid, issue.created_at, requester, issue.repo, cost, issue.number)
        )
    return records
