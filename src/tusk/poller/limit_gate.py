"""The poller's check of the limits across runs, before a task is dispatched.

The decision is ``tusk.contracts.limits.refusal`` over the runs the control
repository's log issues hold, read once per cycle and only when a task is
about to be dispatched. Tasks this cycle dispatched count at once (their log
issues do not exist yet), so one cycle never dispatches past a limit. Two
pollers at once can each dispatch what the other has not yet logged; the
run-claude re-check, which counts exactly the runs that claimed before its
own, then refuses the run past the limit before its agent starts.

Over a limit the mention is answered on its thread (``tusk.github.limit_reply``)
and, as ``limits.over_limit`` says, waits (the thread stays unread, so the next
poll looks at it again) or is dropped (the thread may be marked read).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from tusk.contracts.config import Settings
from tusk.contracts.limits import Refusal, RunRecord, refusal, requester_left
from tusk.contracts.models import TaskWork
from tusk.contracts.raw_context import RawContext
from tusk.contracts.run_limits import run_limits
from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.github.limit_reply import post_reply, replied, reply_body
from tusk.issues.usage import read_runs

log = logging.getLogger(__name__)

RunsReader = Callable[[datetime], list[RunRecord]]


class LimitGate:
    """The runs of the window, read lazily once per cycle, plus this cycle's dispatches."""

    def __init__(
        self,
        gateway: Gateway,
        settings: Settings,
        *,
        clock: Callable[[], datetime],
        read: RunsReader | None = None,
    ) -> None:
        self.gateway = gateway
        self.settings = settings
        self._clock = clock
        self._read = read or (lambda now: read_runs(gateway, settings, now=now))
        self._runs: list[RunRecord] | None = None

    def new_cycle(self) -> None:
        self._runs = None

    def now(self) -> datetime:
        """GitHub's clock where an answer told it (the log issues' times are GitHub's)."""
        return self.gateway.server_time or self._clock()

    def check(self, work: TaskWork) -> Refusal | None:
        limits = self.settings.limits
        if not limits.counts_runs:
            return None
        if self._runs is None:
            self._runs = self._read(self.now())
        return refusal(
            self._runs,
            jobid=work.jobid,
            requester=work.actor,
            repo=work.repo,
            now=self.now(),
            limits=limits,
        )

    def dispatched(self, work: TaskWork) -> None:
        if self._runs is not None:
            # It holds its whole budget against its requester's cap until it ends: at most
            # what the requester has left, as run-claude's re-check will lower it to.
            left = requester_left(
                self._runs,
                jobid=work.jobid,
                requester=work.actor,
                now=self.now(),
                limits=self.settings.limits,
            )
            config = work.permission_config
            budget = run_limits(self.settings, config, requester_left_usd=left).budget_usd
            self._runs.append(
                RunRecord(work.jobid, self.now(), work.actor, work.repo, 0.0, budget_usd=budget)
            )


def answer(
    gateway: Gateway, settings: Settings, work: TaskWork, found: Refusal, raw: RawContext
) -> str:
    """Reply on the thread once; returns the log line. A reply that fails is logged:
    the mention still waits or is dropped as configured, and a waiting one is
    answered on a later poll."""
    decision = settings.limits.over_limit
    what = "waits for a later poll" if decision == "wait" else "dropped"
    line = f"{work.trigger.url}: over a limit, {what}: {found.sentence()}"
    comments = [comment.model_dump(mode="json") for comment in raw.comments]
    if replied(comments, bot=settings.bot, jobid=work.jobid, limit=found.limit, decision=decision):
        return line + " (already answered on the thread)"
    body = reply_body(
        found,
        jobid=work.jobid,
        bot=settings.bot,
        decision=decision,
        go_away=settings.go_away.phrase,
    )
    try:
        post_reply(
            gateway,
            repo=work.repo,
            kind=raw.kind,
            number=raw.thread.number,
            discussion_node_id=raw.thread.node_id,
            body=body,
        )
    except (TuskError, ValueError) as error:
        log.warning("could not answer %s: %s", work.trigger.url, error)
        return line + f" (the reply on the thread failed: {error})"
    return line + " (answered on the thread)"
