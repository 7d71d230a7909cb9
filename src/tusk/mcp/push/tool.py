"""The ``push_branch`` tool: the agent's branch taken, checked and pushed to the bot's fork.

Policy is asked before anything is taken from the agent (a push it would refuse
anyway costs nothing); the branch is then imported from the agent's bundle
(``git_push.Pusher.take``) and the push goes through ``Runtime.write`` with the
commit it would publish, so the audit, duplicates and staged mode see the
exact commit.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio.to_thread
from pydantic import BaseModel

from tusk.mcp.gate.policy import Refused
from tusk.mcp.push.approval import keep_branch
from tusk.mcp.push.git_push import Pusher, PushFailed
from tusk.mcp.server.runtime import Runtime
from tusk.mcp.writes.outcomes import Prepared, WriteOutcome

logger = logging.getLogger(__name__)


class PushBranch(BaseModel):
    branch: str


async def push_branch(rt: Runtime, pusher: Pusher | None, a: PushBranch) -> str:
    asked = {"branch": a.branch}
    call = rt.call("push_branch", "write", asked)
    if pusher is None:
        rt.recorder.fail(call, PushFailed("this server has no workspace to push from"))
    try:
        # Nothing is taken from the agent for a push policy would refuse anyway.
        rt.check("push_branch", {**asked, "sha": ""}, await rt.fresh_blocklist())
        taken = await anyio.to_thread.run_sync(pusher.take, a.branch)
    except Refused as refused:
        rt.recorder.refuse(call, refused)
    except Exception as error:
        rt.recorder.fail(call, error)
    summary = (
        f"push {a.branch} at {taken.sha[:12]} to {rt.config.bot}'s fork of {rt.config.trigger_repo}"
    )
    request: dict[str, Any] = {"git": "push", "branch": a.branch, "sha": taken.sha}
    if rt.approval is not None:  # kept as a bundle for the apply job, checked as a push
        try:
            request |= await anyio.to_thread.run_sync(keep_branch, pusher, taken, rt.run_dir)
        except Refused as refused:
            rt.recorder.refuse(call, refused)
        except Exception as error:
            rt.recorder.fail(call, error)

    def send(_: object) -> WriteOutcome:
        outcome = pusher.push(taken)
        try:
            rt.recorder.pushed(a.branch, outcome.url, pusher.diffstat(taken))
        except Exception:  # the summary is a courtesy: the push stands without it
            logger.warning("could not count the changes of %s", a.branch, exc_info=True)
        return outcome

    return await rt.write(
        "push_branch",
        {"branch": a.branch, "sha": taken.sha},
        prepare=lambda: Prepared(summary, request),
        send=send,
    )
