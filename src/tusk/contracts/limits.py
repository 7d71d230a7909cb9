"""Limits across runs: a pure decision over the runs the log issues hold.

Every run of the deployment has a log issue in the control repository: when it
started (the issue's creation), who asked and for which repository (its job
marker), and what it has spent so far (its progress comment's ``usage``
marker, kept up to date while the agent works). Over a
rolling window (``limits.usage_window_hours``, 24 h by default) four limits
bound what a new job may add:

* ``daily_budget_usd``: the model spend of every run in the window;
* ``runs_per_requester``: the runs one login asked for;
* ``requester_budget_usd``: the model spend of the runs one login asked for,
  where a run still in flight holds its whole budget (``held``): each run's
  budget is reserved against the requester's remainder when it starts, and
  run-claude lowers a new run's budget to that remainder (``requester_left``),
  so runs of one requester started side by side never together pass the cap;
  a remainder under ``MIN_RUN_BUDGET_USD`` starts nothing;
* ``runs_per_repository``: the runs for one repository.

``refusal`` says which limit a job would break and when it stops breaking it
(the moment enough runs leave the window), or None. A job that already has a
run in the window is a re-delivery, never a new run: it is let through (its
log issue claim decides downstream). A run still in flight counts for one run
and for what it has spent so far: the spend cap can therefore be passed by
what the runs already started still spend, never by a run started after the
cap was reached.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from tusk.contracts.config import Limits
from tusk.contracts.pricing import format_usd

LimitName = Literal[
    "daily_budget_usd", "runs_per_requester", "requester_budget_usd", "runs_per_repository"
]
# A requester with less than this left of requester_budget_usd starts no run: a run
# with a few cents to spend would stop at its first answer.
MIN_RUN_BUDGET_USD = 0.10


@dataclass(frozen=True)
class RunRecord:
    """One run as its log issue shows it."""

    jobid: str
    started_at: datetime
    requester: str | None = None
    repo: str | None = None
    cost_usd: float | None = None  # None: its spend was not read
    log_issue: int | None = None  # the run's log issue number
    budget_usd: float | None = None  # the run's budget, held while it runs (None: unknown)
    finished: bool = False  # it ended: only what it spent counts


def held(record: RunRecord) -> float:
    """What a run counts against the requester's spend cap: what it spent, and while it
    may still spend, at least its whole budget (reserved when it started)."""
    spent = record.cost_usd or 0.0
    if record.finished or record.budget_usd is None:
        return spent
    return max(spent, record.budget_usd)


@dataclass(frozen=True)
class Refusal:
    """The limit a job would break, what it stands at, and when it resets."""

    limit: LimitName
    used: str  # e.g. "$20.13" or "10 runs"
    allowed: str  # e.g. "$20.00" or "10 runs"
    scope: str  # "all runs", "requester alice", "repository alice/widgets"
    resets_at: datetime | None  # None: the limit is 0, nothing can free it
    window_hours: float

    def sentence(self) -> str:
        window = f"{self.window_hours:g} h"
        reset = (
            f"it resets at {self.resets_at.strftime('%Y-%m-%d %H:%M')} UTC"
            if self.resets_at is not None
            else "it is set to 0, so it never resets"
        )
        return (
            f"`limits.{self.limit}` is reached for {self.scope}: {self.used} in the last "
            f"{window}, {self.allowed} allowed; {reset}."
        )


def in_window(records: Iterable[RunRecord], *, now: datetime, hours: float) -> list[RunRecord]:
    """The runs started in the rolling window ending ``now``, oldest first, one per job."""
    start = now - timedelta(hours=hours)
    seen: set[str] = set()
    out: list[RunRecord] = []
    for record in sorted(records, key=lambda r: (r.started_at, r.jobid)):
        if start < record.started_at <= now and record.jobid not in seen:
            seen.add(record.jobid)
            out.append(record)
    return out


def refusal(
    records: Iterable[RunRecord],
    *,
    jobid: str,
    requester: str,
    repo: str,
    now: datetime,
    limits: Limits,
) -> Refusal | None:
    """Which limit starting ``jobid`` would break, or None when it may run."""
    hours = limits.usage_window_hours
    window = in_window(records, now=now, hours=hours)
    if any(record.jobid == jobid for record in window):
        return None  # a re-delivery of a run already counted
    budget = _budget(window, limits.daily_budget_usd, hours)
    if budget is not None:
        return budget
    mine = [r for r in window if (r.requester or "").lower() == requester.lower()]
    runs = _count(
        mine, limits.runs_per_requester, "runs_per_requester", f"requester {requester}", hours
    )
    if runs is not None:
        return runs
    money = _requester_budget(mine, limits.requester_budget_usd, requester, hours)
    if money is not None:
        return money
    here = [r for r in window if (r.repo or "").lower() == repo.lower()]
    return _count(
        here, limits.runs_per_repository, "runs_per_repository", f"repository {repo}", hours
    )


def requester_left(
    records: Iterable[RunRecord], *, jobid: str, requester: str, now: datetime, limits: Limits
) -> float | None:
    """What ``requester`` has left of ``limits.requester_budget_usd`` for job ``jobid``
    (the runs of the window but that job's own, each as ``held``), or None: no cap."""
    cap = limits.requester_budget_usd
    if cap is None:
        return None
    window = in_window(records, now=now, hours=limits.usage_window_hours)
    mine = [
        r for r in window if (r.requester or "").lower() == requester.lower() and r.jobid != jobid
    ]
    return cap - sum(held(record) for record in mine)


def _requester_budget(
    mine: Sequence[RunRecord], cap: float | None, requester: str, hours: float
) -> Refusal | None:
    if cap is None:
        return None
    used = sum(held(record) for record in mine)
    if cap - used >= MIN_RUN_BUDGET_USD:
        return None
    # A run fits again once enough of the oldest holds have left the window.
    left = used
    resets_at = None
    for record in mine:
        left -= held(record)
        if cap - left >= MIN_RUN_BUDGET_USD:
            resets_at = _leaves_window(record, hours)
            break
    return Refusal(
        "requester_budget_usd",
        used=format_usd(used),
        allowed=format_usd(cap),
        scope=f"requester {requester}",
        resets_at=resets_at,
        window_hours=hours,
    )


def _leaves_window(record: RunRecord, hours: float) -> datetime:
    return record.started_at + timedelta(hours=hours)


def _budget(window: Sequence[RunRecord], cap: float | None, hours: float) -> Refusal | None:
    if cap is None:
        return None
    spent = sum(record.cost_usd or 0.0 for record in window)
    if spent < cap:
        return None
    # The cap frees up once enough of the oldest spend has left the window.
    left = spent
    resets_at = None
    for record in window:
        left -= record.cost_usd or 0.0
        if left < cap:
            resets_at = _leaves_window(record, hours)
            break
    return Refusal(
        "daily_budget_usd",
        used=format_usd(spent),
        allowed=format_usd(cap),
        scope="all runs",
        resets_at=resets_at,
        window_hours=hours,
    )


def _count(
    runs: Sequence[RunRecord], allowed: int | None, name: LimitName, scope: str, hours: float
) -> Refusal | None:
    if allowed is None or len(runs) < allowed:
        return None
    # One more run fits once len(runs) - allowed + 1 of the oldest have left the window.
    freeing = len(runs) - allowed
    resets_at = _leaves_window(runs[freeing], hours) if allowed > 0 else None
    return Refusal(
        name,
        used=f"{len(runs)} run(s)",
        allowed=f"{allowed} run(s)",
        scope=scope,
        resets_at=resets_at,
        window_hours=hours,
    )
