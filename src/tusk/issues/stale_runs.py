"""Runs that died (MISSION C8): a claim with no end past its time budget plus a grace.

A run's write-up closes its log issue; a runner that was lost, or a job that was
cancelled, leaves it open. Once an open log issue of the bot is older than the run's
wall-clock budget (``limits.run_minutes``) plus the claim's lease
(``limits.claim_lease_minutes``, the grace for queueing, the self-checks and the
write-up), its run is over whatever it says: it holds its thread no longer
(``tusk.issues.thread_runs``), and the poller reports it failed, once, on its log
issue and on the thread's status comment. Pure but for ``report``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tusk.contracts.config import Settings
from tusk.github.gateway import Gateway, GitHubError
from tusk.github.once import post_marked_comment
from tusk.github.thread_status import Status, render_status, status_of
from tusk.text.markers import first_marker, parse_markers, render_marker

STALE_NOTE = (
    "The run made no progress past its time budget: its runner was lost or its job "
    "cancelled. It is reported failed, and the thread is free for the next mention."
)


@dataclass(frozen=True)
class StaleRun:
    number: int
    url: str
    jobid: str
    thread: str  # owner/name#N


def is_stale(item: dict[str, Any], settings: Settings, now: datetime) -> bool:
    created = item.get("created_at")
    if not isinstance(created, str):
        return False
    started = datetime.fromisoformat(created.replace("Z", "+00:00"))
    limits = settings.limits
    return now - started > timedelta(minutes=limits.run_minutes + limits.claim_lease_minutes)


def stale_of(item: dict[str, Any]) -> StaleRun | None:
    marker = first_marker(item.get("body"), "job") or {}
    thread, jobid = marker.get("thread"), marker.get("jobid")
    if not isinstance(thread, str) or not isinstance(jobid, str):
        return None
    return StaleRun(int(item["number"]), str(item.get("html_url") or ""), jobid, thread)


def report(gateway: Gateway, settings: Settings, run: StaleRun) -> bool:
    """Say once on the log issue that the run died, and on the thread's status comment;
    True when this call said it."""
    control, bot = settings.control_repo, settings.bot
    path = f"/repos/{control}/issues/{run.number}/comments"
    for comment in gateway.paginate(path):
        author = str((comment.get("user") or {}).get("login") or "")
        if author.lower() == bot.lower() and parse_markers(comment.get("body"), "stale"):
            return False
    body = render_marker("stale", {"jobid": run.jobid}) + f"\n❌ {STALE_NOTE}\n"
    post_marked_comment(
        gateway,
        control,
        run.number,
        body,
        kind="stale",
        nonce=run.jobid,
        key="jobid",
        bot=bot,
        what=f"the note that job {run.jobid} died",
    )
    with contextlib.suppress(GitHubError, ValueError):  # a courtesy on the thread
        show_on_thread(gateway, settings, run)
    return True


def show_on_thread(gateway: Gateway, settings: Settings, run: StaleRun) -> None:
    repo, _, number = run.thread.rpartition("#")
    comments = list(gateway.paginate(f"/repos/{repo}/issues/{int(number)}/comments"))
    found = status_of(comments, bot=settings.bot, jobid=run.jobid)
    if found is None:
        return
    nonce = str((first_marker(found.get("body"), "status") or {}).get("nonce") or "")
    failed = Status("done", headline=STALE_NOTE.split(":")[0], ok=False)
    body = render_status(
        failed,
        jobid=run.jobid,
        nonce=nonce,
        bot=settings.bot,
        go_away=settings.go_away.phrase,
        log_issue_url=run.url,
    )
    gateway.patch(f"/repos/{repo}/issues/comments/{found['id']}", json={"body": body})
