"""Follow-ups a run could no longer take become the thread's next task (MISSION C1).

A follow-up recorded on a log issue after the run's last pass (the run's inbox
marked it ``missed``, or it landed after the inbox closed: a poller's listing
that lagged, a hand-over racing the write-up) is never delivered. Once the run
can take nothing more (its log issue is closed), the poller, on a cycle that
already reads threads, finds the bot's log issues closed or updated lately,
and dispatches each follow-up there marked neither ``delivered`` nor
``carried`` as a task for its thread. The job id comes from the follow-up's
node, so two pollers, a lost dispatch answer and re-deliveries are one job,
which the claim runs once; the ``carried`` record and the thread's note follow
the dispatch, so a failure before them only repeats a dispatch that collapses.

Only the bot's records count (``tusk.issues.followups``), and the mention is read
back from its thread and planned as a trigger is (``core.plan``: allowed users,
the blocklist, its own permission marker). Pure but for ``recently_closed`` and
``note_carried``, which talk to GitHub; the cycle does the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import TriggerType
from tusk.contracts.raw_context import ThreadKind
from tusk.github.gateway import Gateway
from tusk.github.once import post_marked_comment
from tusk.issues import claims, followups
from tusk.issues.followups import Followup
from tusk.issues.thread_runs import thread_in_marker
from tusk.poller.jobids import job_id
from tusk.text.markers import parse_markers, render_marker

CARRIED = "carried"
# Outcomes that settle a follow-up: the agent got it, or a new run took it as its task.
SETTLED = frozenset({"delivered", CARRIED})
# Outcomes that settle it without a run: nobody may start one with it any more.
REFUSED = "refused"


def outcomes(comments: Sequence[dict[str, Any]], *, bot: str) -> dict[str, set[str]]:
    """Every outcome the bot recorded for each node (``missed`` comes before ``carried``)."""
    found: dict[str, set[str]] = {}
    for comment in comments:
        if not claims.by_bot(comment, bot):
            continue
        for data in parse_markers(comment.get("body"), "followup-delivered"):
            node, how = data.get("node"), data.get("how")
            if isinstance(node, str) and isinstance(how, str):
                found.setdefault(node, set()).add(how)
    return found


def to_carry(comments: Sequence[dict[str, Any]], *, bot: str) -> list[Followup]:
    """The follow-ups on a finished run's log issue that no run has taken and none was
    refused, oldest first."""
    done = outcomes(comments, bot=bot)
    return [
        f
        for f in followups.recorded(comments, bot=bot)
        if not done.get(f.node, set()) & (SETTLED | {REFUSED})
    ]


def thread_kind(url: str) -> ThreadKind:
    """The kind of thread a follow-up's URL is on (a comment's type does not say)."""
    if "/pull/" in url:
        return "pull_request"
    return "discussion" if "/discussions/" in url else "issue"


def node_parts(node: str) -> tuple[str, str]:
    """(trigger type, node id) of a follow-up's ``node``."""
    kind, _, identifier = node.partition(":")
    return kind, identifier


def carried_job_id(repo: str, node: str) -> str:
    """The job a carried follow-up runs as: from its node alone, so every sweep that finds
    it names one job, and never the mention's own (a hand-over claimed that one)."""
    kind, identifier = node_parts(node)
    trigger_type: TriggerType = kind  # type: ignore[assignment]  # checked by the caller
    return job_id(repo, trigger_type, f"{identifier}/carried")


def finished_thread(item: dict[str, Any], bot: str) -> tuple[str, int] | None:
    """The thread of a finished run's log issue (the bot's, closed), or None."""
    if item.get("state") != "closed" or not claims.by_bot(item, bot):
        return None
    thread = thread_in_marker(item)
    if thread is None or "#" not in thread:
        return None
    repo, _, number = thread.rpartition("#")
    return (repo, int(number)) if number.isdigit() else None


def recently_closed(gateway: Gateway, settings: Settings, now: datetime) -> list[dict[str, Any]]:
    """The bot's closed log issues updated within a run's budget and lease: one page. A
    late record updates its issue, so it is seen on the next cycle that reads threads."""
    limits = settings.limits
    since = now - timedelta(minutes=limits.run_minutes + limits.claim_lease_minutes)
    params = {
        "labels": settings.labels.workflow,
        "state": "closed",
        "creator": settings.bot,
        "sort": "updated",
        "direction": "desc",
        "since": since.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "per_page": 100,
    }
    path = f"/repos/{settings.control_repo}/issues"
    return list(gateway.get(path, params=params) or [])


def outcome_note(followup: Followup, how: str, note: str) -> str:
    """What became of a late follow-up, on the log issue. It opens with its marker: the
    poller's bot token writes nothing else there."""
    marker = render_marker("followup-delivered", {"node": followup.node, "how": how})
    return f"{marker}\n{note}\n"


def say_outcome(
    gateway: Gateway, settings: Settings, *, log_issue: int, followup: Followup, how: str, note: str
) -> None:
    path = f"/repos/{settings.control_repo}/issues/{log_issue}/comments"
    gateway.post(path, json={"body": outcome_note(followup, how, note)})


def carried_note(followup: Followup, *, jobid: str) -> str:
    """The thread's word that its follow-up is a new run's task. No ``@``."""
    return (
        render_marker("followup-carried", {"node": followup.node, "jobid": jobid})
        + f"\n📨 The follow-up {followup.url} came after the run on this thread ended, "
        "so it was not delivered to it: it is the task of a new run.\n"
    )


def note_carried(
    gateway: Gateway,
    settings: Settings,
    *,
    log_issue: int,
    thread: tuple[str, int],
    followup: Followup,
    jobid: str,
) -> None:
    """Once dispatched: ``carried`` on the log issue, then once on the thread (by node)."""
    say_outcome(
        gateway,
        settings,
        log_issue=log_issue,
        followup=followup,
        how=CARRIED,
        note=f"📨 Follow-up {followup.url} came after the run ended: it is job {jobid}'s task.",
    )
    repo, number = thread
    post_marked_comment(
        gateway,
        repo,
        number,
        carried_note(followup, jobid=jobid),
        kind="followup-carried",
        nonce=followup.node,
        key="node",
        bot=settings.bot,
        look_first=True,
        what="the carried follow-up's note",
    )
