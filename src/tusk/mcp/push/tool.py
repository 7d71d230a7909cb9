"""The ``push_branch`` tool: the agent's branch taken, checked and pushed to the bot's fork.

An ordinary write (``Runtime.write``): the gate first looks at the branch alone, so
nothing is taken from the agent for a push it would refuse anyway; ``prepare_push``
then imports the branch (from the agent's bundle, or in an apply job from the bundle
the approved set kept) and hands the runtime the commit it would publish, which the
gate checks again, so the audit, duplicates and record-only mode see the exact commit.
``send_push`` pushes what ``prepare_push`` took.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel

from tusk.mcp.push.approval import keep_branch, take_kept
from tusk.mcp.push.git_push import PushFailed, Taken
from tusk.mcp.server.runtime import Runtime
from tusk.mcp.writes.outcomes import Prepared, WriteOutcome

logger = logging.getLogger(__name__)


class PushBranch(BaseModel):
    branch: str


def prepare_push(rt: Runtime, a: PushBranch) -> Prepared:
    pusher = rt.pusher
    if pusher is None:
        raise PushFailed("this server has no workspace to push from")
    kept = pusher.kept.pop(a.branch, None)  # an apply job pushes what the set kept
    taken = take_kept(pusher, a.branch, kept) if kept is not None else pusher.take(a.branch)
    summary = (
        f"push {a.branch} at {taken.sha[:12]} to {rt.config.bot}'s fork of {rt.config.trigger_repo}"
    )
    request: dict[str, Any] = {"git": "push", "branch": a.branch, "sha": taken.sha}
    if rt.approval is not None:  # kept as a bundle for the apply job, checked as a push
        request |= keep_branch(pusher, taken, rt.run_dir)
    return Prepared(summary, request, keyed={"sha": taken.sha}, held=taken)


def send_push(rt: Runtime, a: PushBranch, prepared: Prepared) -> WriteOutcome:
    pusher, taken = rt.pusher, prepared.held
    if pusher is None or not isinstance(taken, Taken):
        raise PushFailed("nothing was taken to push")
    outcome = pusher.push(taken)
    try:
        rt.recorder.pushed(a.branch, outcome.url, pusher.diffstat(taken))
    except Exception:  # the summary is a courtesy: the push stands without it
        logger.warning("could not count the changes of %s", a.branch, exc_info=True)
    return outcome
