"""The limits across runs checked again before the agent starts (``limits.*``).

The poller checks before it dispatches, but two pollers at once (or a
re-delivery, or dispatches sent by hand) can each let a run through that the
other has not yet logged. Claims settle that: a run counts exactly the runs
whose log issues were claimed before its own (a lower number, the order
``tusk.issues.log_issue`` already decides by), plus what they have spent so
far. A run past a limit never starts its agent: it answers on the thread
(once, under the bot's marker, ``tusk.github.limit_reply``), is written up as
``over_limit`` and its log issue closes as not planned. The mention was
already marked read, so it is dropped: the reply says to mention the bot
again once the limit resets.

The same count settles the run's budget under ``limits.requester_budget_usd``:
what the requester has left, after every run claimed before this one holds
its whole budget or what it spent once it ended, is this run's budget at most
(``tusk.contracts.run_limits``), so runs of one requester started side by side
never together pass the cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tusk.contracts.config import Secrets, Settings
from tusk.contracts.limits import Refusal, refusal, requester_left
from tusk.contracts.models import ContextDocument, RunMetadata
from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.github.limit_reply import post_reply, replied, reply_body
from tusk.issues.usage import read_runs
from tusk.steps.run_claude.writeup.outcome import Outcome

HEADLINE = "Not started: a limit across runs is reached"


@dataclass(frozen=True)
class Check:
    """The re-check's answer: the run stops (``outcome``), or it may start with at most
    what its requester has left (``requester_left_usd``; None: no such cap)."""

    outcome: Outcome | None = None
    requester_left_usd: float | None = None


def over_limit(
    gateway: Gateway,
    settings: Settings,
    run: RunMetadata,
    doc: ContextDocument | None,
    *,
    now: datetime | None = None,
) -> Outcome | None:
    """The ``over_limit`` outcome when the runs claimed before this one fill a limit."""
    return check(gateway, settings, run, doc, now=now).outcome


def check(
    gateway: Gateway,
    settings: Settings,
    run: RunMetadata,
    doc: ContextDocument | None,
    *,
    now: datetime | None = None,
) -> Check:
    """The limits across runs over the runs claimed before this one."""
    if doc is None or not settings.limits.counts_runs:
        return Check()
    if now is None and gateway.server_time is None:
        gateway.get(f"/repos/{run.control_repo}/issues/{run.log_issue_number}")  # GitHub's clock
    moment = now or _now(gateway)
    runs = read_runs(gateway, settings, now=moment, before=run.log_issue_number)
    found = refusal(
        runs,
        jobid=run.jobid,
        requester=doc.actor,
        repo=doc.repo,
        now=moment,
        limits=settings.limits,
    )
    if found is None:
        left = requester_left(
            runs, jobid=run.jobid, requester=doc.actor, now=moment, limits=settings.limits
        )
        return Check(requester_left_usd=left)
    detail = answer(gateway, settings, doc, found)
    return Check(Outcome(kind="over_limit", headline=HEADLINE, detail=detail))


def recheck(
    secrets: Secrets, settings: Settings, run: RunMetadata, doc: ContextDocument | None
) -> Check:
    """``check`` with the agent token (the bot's: its reply is the bot's own)."""
    token = secrets.require("agent_token")["agent_token"]
    gateway = Gateway(api_url=secrets.github_api_url, token=token, token_name="agent")
    try:
        return check(gateway, settings, run, doc)
    finally:
        gateway.close()


def _now(gateway: Gateway) -> datetime:
    """GitHub's clock (the log issues' times are GitHub's), else this runner's."""
    return gateway.server_time or datetime.now(UTC)


def thread_comments(gateway: Gateway, doc: ContextDocument) -> list[dict[str, Any]]:
    """The thread's comments now (a discussion's as the poller fetched them)."""
    if doc.raw.kind == "discussion" or doc.trigger.number is None:
        return [comment.model_dump(mode="json") for comment in doc.raw.comments]
    return list(gateway.paginate(f"/repos/{doc.repo}/issues/{doc.trigger.number}/comments"))


def answer(gateway: Gateway, settings: Settings, doc: ContextDocument, found: Refusal) -> str:
    """Reply on the thread unless the bot already did; the outcome's detail."""
    detail = f"{found.sentence()} The mention is dropped; the requester was answered on the thread"
    try:
        if replied(
            thread_comments(gateway, doc),
            bot=settings.bot,
            jobid=doc.jobid,
            limit=found.limit,
            decision="drop",
        ):
            return detail + " (earlier)."
        post_reply(
            gateway,
            repo=doc.repo,
            kind=doc.raw.kind,
            number=doc.trigger.number,
            discussion_node_id=doc.raw.thread.node_id,
            body=reply_body(
                found,
                jobid=doc.jobid,
                bot=settings.bot,
                decision="drop",
                go_away=settings.go_away.phrase,
            ),
        )
    except (TuskError, ValueError) as error:
        return (
            f"{found.sentence()} The mention is dropped; the reply on the thread failed: {error}."
        )
    return detail + "."
