"""run-claude's side of the status on the thread (``tusk.github.thread_status``).

``mirror`` says *working* on the thread before the agent starts, and is then the
progress reporter's hook: when the progress comment on the log issue is
edited (at most every 30 s) and the run's writes or refusals changed, the
thread's status shows them. Nothing else edits it while the agent works: the
agent reads the thread, and an edit in between would change what it reads
(and could hide a loop of identical reads). ``conclude`` puts the outcome there once the
write-up is published, with links to what the run created (from its audit
log). Both do nothing when ``feedback.thread_status`` is off, and neither ever
fails the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tusk.audit.chain import created_items, read_records
from tusk.contracts.config import Secrets, Settings
from tusk.contracts.models import RunMetadata
from tusk.contracts.pricing import format_usd
from tusk.github.gateway import Gateway
from tusk.github.thread_status import Status, ThreadStatus, thread_kind
from tusk.steps.run_claude.writeup.glance import PUSHES_FILE, PushedBranch, read_pushes
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.steps.run_claude.writeup.progress import Snapshot, Tally, snapshot
from tusk.steps.run_claude.writeup.publish import WriteUpState


def status_comment(
    gateway: Gateway,
    settings: Settings,
    run: RunMetadata,
    clock: Callable[[], float] = time.monotonic,
) -> ThreadStatus:
    return ThreadStatus(
        gateway,
        repo=run.repo,
        number=run.thread_number,
        kind=thread_kind(run.trigger_type),
        jobid=run.jobid,
        bot=settings.bot,
        go_away=settings.go_away.phrase,
        log_issue_url=run.log_issue_url,
        clock=clock,
    )


# The status warns once when the run has spent this share of its budget.
BUDGET_WARNING_SHARE = 0.8


def budget_warning(snap: Snapshot) -> str:
    """Pure: the warning the status shows once most of the budget is spent, or ""."""
    if snap.budget_share < BUDGET_WARNING_SHARE or snap.cost_usd is None:
        return ""
    assert snap.budget_usd is not None
    return (
        f"This run has used {snap.budget_share:.0%} of its budget "
        f"({format_usd(snap.cost_usd)} of {format_usd(snap.budget_usd)}); it stops at the budget."
    )


def working(snap: Snapshot, budget: str = "", note: str = "") -> Status:
    return Status(
        "working",
        pass_name=snap.pass_name,
        tool_calls=snap.tool_calls,
        writes=snap.writes,
        refused=snap.refused,
        cost=snap.cost,
        minutes=snap.minutes,
        followups=snap.followups,
        budget=budget,
        warning=budget_warning(snap),
        note=note,
    )


def mirror(
    gateway: Gateway,
    settings: Settings,
    run: RunMetadata,
    clock: Callable[[], float] = time.monotonic,
    *,
    note: str = "",
) -> Callable[[Snapshot], None] | None:
    """The hook that shows each progress snapshot on the thread, or None when off.
    ``note``: whether the run resumed the thread's conversation or started fresh."""
    if not settings.feedback.thread_status:
        return None
    comment = status_comment(gateway, settings, run, clock)
    budget = format_usd(settings.agent.max_budget_usd)  # the run's own (run_limits)
    # Before the agent starts: its reads see no edit later.
    comment.show(Status("working", budget=budget, note=note))
    shown: list[tuple[int, int, int, bool, int]] = [(0, 0, 0, False, 0)]

    def show(snap: Snapshot) -> None:
        # Edited only when the run's writes or refusals change (the agent changed the
        # thread then anyway), when a follow-up was delivered, and once when most of the
        # budget is spent; a courtesy: a failure is logged, never raised.
        seen = (
            snap.writes,
            snap.refused,
            snap.staged,
            bool(budget_warning(snap)),
            snap.followups,
        )
        if seen != shown[0] and comment.show(working(snap, budget, note)):
            shown[0] = seen

    return show


def with_diffstats(
    links: tuple[tuple[str, str], ...], pushes: list[PushedBranch]
) -> tuple[tuple[str, str], ...]:
    """A pushed branch's link says what it changes: ``branch (2 file(s), +5 −1)`` (pure)."""
    stats = {pushed.url: pushed.stat() for pushed in pushes if pushed.url}
    return tuple(
        (f"{kind} ({stats[url]})", url) if kind == "branch" and url in stats else (kind, url)
        for kind, url in links
    )


def outcome_status(
    outcome: Outcome,
    snap: Snapshot,
    links: tuple[tuple[str, str], ...],
    note: str = "",
    *,
    record_only: bool = False,
) -> Status:
    """The outcome as the thread reads it. Writes kept for approval were not made: never
    "Done" then (record-only mode says its own words on the log issue)."""
    base = working(snap)
    return Status(
        "done",
        pass_name=base.pass_name,
        tool_calls=base.tool_calls,
        writes=base.writes,
        refused=base.refused,
        cost=base.cost,
        minutes=base.minutes,
        headline=outcome.headline,
        ok=outcome.ok,
        links=links,
        followups=snap.followups,
        stopped_by=outcome.detail.removeprefix("stopped ") if outcome.kind == "stopped" else "",
        approval=outcome.ok and snap.staged > 0 and not record_only,
        note=note,
    )


def conclude(secrets: Secrets, settings: Settings, state: WriteUpState, run_dir: Path) -> None:
    """The outcome on the thread, with links to what the run created."""
    if not settings.feedback.thread_status or state.outcome is None:
        return
    tally = Tally(run_dir / "events.jsonl", run_dir / "audit.jsonl")
    tally.update()
    audit = run_dir / "audit.jsonl"
    try:
        records = read_records(audit)
    except ValueError:  # a broken chain: the log issue says so; the thread gets no links
        records = []
    links = with_diffstats(
        tuple((item.kind, item.url) for item in created_items(records)),
        read_pushes(run_dir / PUSHES_FILE),
    )
    token = secrets.require("agent_token")["agent_token"]
    gateway = Gateway(api_url=secrets.github_api_url, token=token, token_name="agent")
    try:
        comment = status_comment(gateway, settings, state.run)
        note = state.facts.resume_on_thread if state.facts is not None else ""
        snap = snapshot(tally, state.spend, 0.0)
        record_only = state.facts.record_only if state.facts is not None else False
        comment.show(outcome_status(state.outcome, snap, links, note, record_only=record_only))
    finally:
        gateway.close()
