"""The runs of the last hours, read from their log issues (limits across runs, usage).

A run's log issue holds everything the limits count, on GitHub and nowhere
else: its creation time is the run's start; its job marker names the target
repository and, for an agent run, the requester (build-context writes it;
go-away log issues carry none and are not runs); the bot's progress comment
carries a hidden ``usage`` marker with the model spend so far and the run's
budget, rewritten at most every 30 s while the agent works and once more, with
``done``, when it ends. Until then the run holds its whole budget against its
requester's cap (``tusk.contracts.limits.held``): the usage marker's budget
once run-claude has settled it, else the job marker's (build-context writes the
budget the mention allows, which run-claude only lowers). Only the
bot's comments and the control repository's issues are trusted
(``parse_log_issue``), so no one can lower the count by typing a marker.

``read_runs`` lists the control repository's log issues created in the window
(one listing, then one comment listing per run for its spend, only when a
spend cap is set). ``before`` keeps only issues numbered below a claim: the
re-check of a run counts exactly the runs that claimed before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.limits import RunRecord
from tusk.github.gateway import Gateway
from tusk.issues.log_issue import LogIssue, parse_log_issue
from tusk.text.markers import first_marker, render_marker


def usage_marker(cost_usd: float, budget_usd: float | None = None, *, done: bool = False) -> str:
    """The hidden marker a progress comment carries: the run's spend so far, its budget,
    and whether it ended."""
    data: dict[str, Any] = {"cost_usd": round(cost_usd, 6)}
    if budget_usd is not None:
        data["budget_usd"] = round(budget_usd, 6)
    if done:
        data["done"] = True
    return render_marker("usage", data)


@dataclass(frozen=True)
class Usage:
    """What the bot's progress comments of one job report."""

    cost_usd: float = 0.0
    budget_usd: float | None = None  # the run's budget, once run-claude settled it
    done: bool = False


def requester_of(item: dict[str, Any]) -> str | None:
    marker = first_marker(item.get("body"), "job") or {}
    requester = marker.get("requester")
    return requester if isinstance(requester, str) and requester else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and value >= 0 else None


def budget_of(item: dict[str, Any]) -> float | None:
    """The budget the job marker of a log issue allows its run."""
    return _number((first_marker(item.get("body"), "job") or {}).get("budget_usd"))


def spend_of(comments: Iterator[dict[str, Any]], *, bot: str, jobid: str) -> float:
    """Pure: the spend the bot's progress comments of ``jobid`` report (a run that took
    a claim over has a progress comment of its own; each was metered apart)."""
    return usage_of(comments, bot=bot, jobid=jobid).cost_usd


def usage_of(comments: Iterator[dict[str, Any]], *, bot: str, jobid: str) -> Usage:
    """Pure: the spend, budget and end the bot's progress comments of ``jobid`` report;
    with a claim taken over, the spends add up and the latest comment says the rest. A
    write-up part of the job also says the run ended (a run killed before its last
    progress edit is written up by the clean-up step)."""
    total = 0.0
    budget: float | None = None
    done = written_up = False
    for comment in comments:
        author = str((comment.get("user") or {}).get("login") or "")
        body = str(comment.get("body") or "")
        if author.lower() != bot.lower():
            continue
        if (first_marker(body, "writeup") or {}).get("jobid") == jobid:
            written_up = True
        progress = first_marker(body, "progress")
        if not progress or progress.get("jobid") != jobid:
            continue
        usage = first_marker(body, "usage") or {}
        total += _number(usage.get("cost_usd")) or 0.0
        budget = _number(usage.get("budget_usd"))
        done = usage.get("done") is True
    return Usage(total, budget, done or written_up)


def run_issues(
    gateway: Gateway, settings: Settings, *, since: datetime
) -> Iterator[tuple[LogIssue, str, dict[str, Any]]]:
    """Each agent run's log issue created after ``since``, with its requester and the
    issue as REST answered it."""
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
            yield issue, requester, item


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
    limits = settings.limits
    if with_spend is None:
        with_spend = limits.daily_budget_usd is not None or limits.requester_budget_usd is not None
    records = []
    since = now - timedelta(hours=hours)
    for issue, requester, item in run_issues(gateway, settings, since=since):
        if before is not None and issue.number >= before:
            continue
        usage = None
        if with_spend:
            path = f"/repos/{settings.control_repo}/issues/{issue.number}/comments"
            usage = usage_of(gateway.paginate(path), bot=settings.bot, jobid=issue.jobid)
        assert issue.created_at is not None
        budget = usage.budget_usd if usage is not None else None
        records.append(
            RunRecord(
                issue.jobid,
                issue.created_at,
                requester,
                issue.repo,
                usage.cost_usd if usage is not None else None,
                issue.number,
                budget_usd=budget if budget is not None else budget_of(item),
                # Closed (completed, sent away, over a limit) or said so: it spends no more.
                finished=issue.state == "closed" or (usage is not None and usage.done),
            )
        )
    return records
