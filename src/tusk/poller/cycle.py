"""One poll cycle at the edge: fetch, decide (``core``), dispatch, mark read.

Each unread thread costs only what it needs: its notification alone settles
most (``core.triage``: a reason that a mention would have replaced, a blocked
repository); threads the bot read before get one batched look at their
activity (``activity``); only a thread that may hold a new mention gets its
full context. One request marks everything read at the end; only then does each
dispatched mention get its 👀, so a reaction GitHub refuses or rate-limits holds
up no dispatch and no mark.

Nothing is stored between runs. A thread is marked read only when every
trigger it carried was dispatched (or deliberately skipped); otherwise it
stays unread and the next cycle sees it again. The 👀 each dispatched trigger
(task or go-away) gets is the durable record that it was sent: a node that
carries the bot's 👀 (or its run's 🚀/😕) is never dispatched again, however
often its thread is read (a mark answered 202 that lands later, a failed
neighbour). Job ids come from the trigger, so a repeat that slips through
(a crash before the 👀) is recognised downstream (MISSION P1, P8).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from tusk.contracts.config import Settings
from tusk.contracts.limits import Refusal
from tusk.contracts.models import Blocklist, TaskWork, Trigger
from tusk.contracts.raw_context import RawContext
from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.github.reactions import ACKNOWLEDGED, react
from tusk.github.trust import TrustDecision
from tusk.issues import followups, stale_runs
from tusk.issues.thread_runs import RunInFlight, in_flight, open_runs
from tusk.poller import activity, carry, context, notifications
from tusk.poller.authorization import fetch_trust
from tusk.poller.core import (
    Candidate,
    CommandWork,
    Node,
    PollState,
    Skipped,
    Thread,
    Triage,
    after_cycle,
    locate_triggers,
    needs_trust_level,
    nodes_of,
    plan,
    poll,
    triage,
)
from tusk.poller.dispatch import dispatch_command, dispatch_task
from tusk.poller.jobids import job_id
from tusk.poller.limit_gate import LimitGate, answer

log = logging.getLogger(__name__)

ContextFetcher = Callable[[Gateway, context.ThreadRef, str], context.Fetched]


def _default_fetcher(gateway: Gateway, ref: context.ThreadRef, bot: str) -> context.Fetched:
    return context.fetch_context(gateway, ref, bot=bot)


@dataclass
class CycleReport:
    status: int = 0
    threads: int = 0
    dispatched: list[str] = field(default_factory=list)
    commands: list[tuple[str, str]] = field(default_factory=list)  # (job label, job id)
    followups: list[str] = field(default_factory=list)  # recorded for the run in flight
    dead_runs: list[str] = field(default_factory=list)  # reported failed (stale_runs)
    carried: list[str] = field(default_factory=list)  # late follow-ups made new runs (carry)
    skipped: list[str] = field(default_factory=list)
    over_limit: list[str] = field(default_factory=list)  # answered, then waiting or dropped
    marked_read: list[str] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)  # mentions given 👀
    left_unread: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def _late_lines(self) -> list[str]:
        """What an idle cycle's sweep of late follow-ups did."""
        out = [f"carried over: {line}" for line in self.carried]
        out += [f"skipped: {reason}" for reason in self.skipped]
        out += [f"over a limit: {line}" for line in self.over_limit]
        return out + [f"error: {error}" for error in self.errors]

    def lines(self) -> list[str]:
        if self.status == 304:
            idle = ["notifications: 304 not modified, nothing to do"]
            return idle + self._late_lines()
        out = [f"notifications: {self.threads} unread thread(s)"]
        out += [f"dispatched {jobid}" for jobid in self.dispatched]
        out += [f"dispatched {label} {jobid}" for label, jobid in self.commands]
        out += [f"follow-up {line}" for line in self.followups]
        out += [f"reported failed: {line}" for line in self.dead_runs]
        out += [f"carried over: {line}" for line in self.carried]
        out += [f"skipped: {reason}" for reason in self.skipped]
        out += [f"over a limit: {line}" for line in self.over_limit]
        out += [f"left unread: {thread}" for thread in self.left_unread]
        out += [f"error: {error}" for error in self.errors]
        return out


class Poller:
    """The poller's edge. ``bot`` reads notifications and context; ``dispatcher``
    sends ``repository_dispatch`` to the control repository (MISSION T2)."""

    def __init__(
        self,
        *,
        settings: Settings,
        bot: Gateway,
        dispatcher: Gateway,
        read_blocklist: Callable[[], Blocklist],
        fetch_context: ContextFetcher = _default_fetcher,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        after_dispatch: Callable[[Thread], None] = lambda thread: None,
        limits: LimitGate | None = None,
    ) -> None:
        self.settings = settings
        self.bot = bot
        self.dispatcher = dispatcher
        self._read_blocklist = read_blocklist
        self._fetch_context = fetch_context
        self._clock = clock
        self._after_dispatch = after_dispatch  # a seam for crash tests
        self._limits = limits or LimitGate(bot, settings, clock=clock)
        # Jobs this process already sent. Only a courtesy for --loop (a thread left
        # unread is read again next cycle); correctness rests on the job ids.
        self._sent: set[str] = set()
        # Mentions dispatched in this cycle (tasks and go-aways), to get their 👀 once the
        # cycle's work is done: the durable record that they were sent (core.Node).
        self._to_acknowledge: list[tuple[str, Trigger]] = []
        # This cycle's answer to "which run holds this thread", and the threads whose
        # task this cycle dispatched (its log issue does not exist yet).
        self._holders: dict[str, RunInFlight | None] = {}
        self._open_runs: list[dict[str, Any]] | None = None
        self._dispatched_threads: set[str] = set()
        self._blocklist: Blocklist | None = None
        # Log issues a sweep found nothing to carry on, by their updated_at: a courtesy
        # for --loop; a change (a late record) updates the issue, so it is read again.
        self._swept: dict[int, Any] = {}

    def _blocklist_of_cycle(self) -> Blocklist:
        """The blocklist, read at most once per cycle, and only when needed."""
        if self._blocklist is None:
            self._blocklist = self._read_blocklist()
        return self._blocklist

    def cycle(self, state: PollState) -> tuple[PollState, CycleReport]:
        response = notifications.fetch(self.bot, if_modified_since=state.last_modified)
        state, threads = poll(state, response)
        report = CycleReport(status=response.status, threads=len(threads))
        self._limits.new_cycle()
        self._holders.clear()
        self._dispatched_threads.clear()
        self._open_runs = None
        self._blocklist = None
        if not threads:
            # Idle cycles sweep too: a record that lands on a log issue after its close
            # (a hand-over racing the write-up) is carried within a poll interval.
            return self._carry_late_followups(report, state), report
        blocklist = self._blocklist_of_cycle()
        self._report_dead_runs(report)
        looks = {thread.id: triage(thread, blocklist) for thread in threads}
        seen, _ = activity.look(self.bot, [t for t in threads if looks[t.id].look == "probe"])
        failed: set[str] = set()
        for thread in threads:
            handled = self._handle_thread(
                thread, looks[thread.id], seen.get(thread.id), blocklist, report
            )
            if not handled:
                failed.add(thread.id)
        # After the threads: a follow-up this cycle recorded on a run that had just ended
        # (a listing that lagged) is carried over at once.
        state = self._carry_late_followups(report, state)
        # Threads updated in the listing's own second stay unread (``too_fresh``).
        why = {
            thread: "updated in the second GitHub listed it, so looked at again next poll"
            for thread in notifications.too_fresh(threads, response.listed_at)
        }
        why |= {
            thread: "its mention waits or failed (above); the next poll sees it again"
            for thread in failed
        }
        all_done = self._mark_read(threads, why, report)
        self._acknowledge(report)
        return after_cycle(state, all_threads_done=all_done), report

    def _acknowledge(self, report: CycleReport) -> None:
        """👀 on each mention dispatched in this cycle: the requester sees that it was
        picked up. The bot token's only write besides marking read, and a courtesy: it
        comes after every dispatch and mark, so a reaction GitHub refuses or answers
        with a rate limit (which the gateway waits out) delays nothing that counts;
        repeats are one reaction on GitHub."""
        pending, self._to_acknowledge = self._to_acknowledge, []
        for repo, trigger in pending:
            if react(self.bot, repo=repo, trigger=trigger, content=ACKNOWLEDGED):
                report.acknowledged.append(trigger.url)

    def _mark_read(self, threads: list[Thread], why: dict[str, str], report: CycleReport) -> bool:
        """Mark the handled threads read; True when no thread was left unread. ``why``:
        each thread that must stay unread, and the reason the report gives."""
        marks, kept = notifications.plan_marks(threads, set(why))
        for mark in marks:
            try:
                notifications.send_mark(self.bot, mark)
            except TuskError as error:  # the work is dispatched; the next poll repeats it
                where = mark.repo or "the inbox"
                report.errors.append(f"marking {where} read failed: {error}")
                kept += mark.threads
                why |= {t.id: "marking it read failed (above)" for t in mark.threads}
            else:
                report.marked_read += [thread.id for thread in mark.threads]
        later = "updated after a thread of its repository that stays unread"
        report.left_unread += [
            f"{t.repo} {t.title!r} (thread {t.id}): {why.get(t.id, later)}" for t in kept
        ]
        return not kept

    def _handle_thread(
        self,
        thread: Thread,
        look: Triage,
        seen: RawContext | None,
        blocklist: Blocklist,
        report: CycleReport,
    ) -> bool:
        """Dispatch every trigger of ``thread``; True when it may be marked read.

        ``look`` is the triage of its notification; ``seen``, its activity when a
        look saw the thread whole. Only a thread that may hold a new mention costs
        its full context."""
        if look.look == "done":
            report.skipped.append(look.why)
            return True
        if seen is not None:
            candidates, skipped = locate_triggers(
                nodes_of(seen), since=thread.last_read_at, settings=self.settings
            )
            if not candidates:
                report.skipped += [
                    f"{s.node.url if s.node else thread.repo}: {s.reason}" for s in skipped
                ]
                return True
        kind = thread.kind
        assert kind is not None  # triage leaves kindless threads done
        ref = context.ThreadRef(
            repo=thread.repo, kind=kind, number=thread.number, title=thread.title
        )
        try:
            fetched = self._fetch_context(self.bot, ref, self.settings.bot)
            candidates, skipped = locate_triggers(
                nodes_of(fetched.raw), since=thread.last_read_at, settings=self.settings
            )
            report.skipped += [
                f"{s.node.url if s.node else thread.repo}: {s.reason}" for s in skipped
            ]
            waiting = [
                self._handle_candidate(candidate, thread, fetched.raw, blocklist, report)
                for candidate in candidates
            ]
            self._after_dispatch(thread)
        except context.ThreadGone as gone:  # deleted or transferred: nothing left to do
            log.warning("thread %s in %s: %s; marked read", thread.id, thread.repo, gone)
            report.skipped.append(f"{thread.repo} {thread.title!r}: {gone}")
            return True
        except (TuskError, LookupError, ValidationError) as error:
            log.error("thread %s in %s: %s", thread.id, thread.repo, error)
            report.errors.append(f"{thread.repo} {thread.title!r}: {error}")
            return False
        return not any(waiting)  # a mention waiting for a limit keeps the thread unread

    def _handle_candidate(
        self,
        candidate: Candidate,
        thread: Thread,
        raw: RawContext,
        blocklist: Blocklist,
        report: CycleReport,
    ) -> bool:
        """Dispatch one trigger; True when it waits (over a limit) for a later poll."""
        node = candidate.node
        if job_id(thread.repo, node.type, node.id) in self._sent:
            return False
        trust = TrustDecision("external", "none", "not asked: the author may not start work")
        if needs_trust_level(candidate, self.settings):
            trust = fetch_trust(
                self.bot, repo=thread.repo, login=node.author, association=node.author_association
            )
        work = plan(
            candidate,
            repo=thread.repo,
            trust=trust,
            settings=self.settings,
            blocklist=blocklist,
            now=self._clock(),
            raw=raw,
        )
        if isinstance(work, Skipped):
            log.info("skipped %s: %s", node.url, work.reason)
            report.skipped.append(f"{node.url}: {work.reason}")
        elif isinstance(work, CommandWork):
            dispatch_command(self.dispatcher, self.settings, work)
            self._sent.add(work.request.jobid)
            report.commands.append((work.job.label, work.request.jobid))
            self._to_acknowledge.append((thread.repo, node.as_trigger()))  # sent once: 👀
        elif (key := followups.thread_key(work.repo, node.number)) in self._dispatched_threads:
            # A run for this thread was sent this cycle and has no log issue yet: the next
            # cycle sees its claim and makes this mention its follow-up (C1).
            report.skipped.append(f"{node.url}: waits for the run just sent on its thread")
            return True
        elif key is not None and (holder := self._holder(key)) is not None:
            if holder.jobid != work.jobid:
                self._follow_up(holder, work, report)
        elif (over := self._limits.check(work)) is not None:
            report.over_limit.append(answer(self.bot, self.settings, work, over, raw))
            log.info("over a limit: %s", report.over_limit[-1])
            return self.settings.limits.over_limit == "wait"
        else:
            dispatch_task(self.dispatcher, self.settings, work, raw)
            self._limits.dispatched(work)
            self._sent.add(work.jobid)
            report.dispatched.append(work.jobid)
            self._to_acknowledge.append((work.repo, work.trigger))  # 👀 once the work is done
            if key is not None:
                self._dispatched_threads.add(key)
        return False

    def _github_now(self) -> datetime:
        """GitHub's clock (its Date header), as a claim's lease is measured, not ours."""
        return self.bot.server_time or self._clock()

    def _runs(self) -> list[dict[str, Any]]:
        """The bot's open log issues, listed once per cycle."""
        if self._open_runs is None:
            self._open_runs = open_runs(self.bot, self.settings)
        return self._open_runs

    def _holder(self, key: str) -> RunInFlight | None:
        if key not in self._holders:
            self._holders[key] = in_flight(self._runs(), self.settings, key, self._github_now())
        return self._holders[key]

    def _report_dead_runs(self, report: CycleReport) -> None:
        """Runs past their time budget and grace that never ended: reported failed, once,
        on their log issue and the thread's status comment; their threads are free (C8).
        A courtesy: a failure here holds up no dispatch."""
        try:
            for item in self._runs():
                dead = stale_runs.stale_of(item)
                if dead is None or not stale_runs.is_stale(item, self.settings, self._github_now()):
                    continue
                if stale_runs.report(self.bot, self.settings, dead):
                    report.dead_runs.append(f"{dead.url} ({dead.thread})")
        except TuskError as error:
            report.errors.append(f"reporting dead runs failed: {error}")

    def _carry_late_followups(self, report: CycleReport, state: PollState) -> PollState:
        """Follow-ups left on the log issues of runs that ended (closed, failed, or dead)
        become their threads' next tasks, each once (``carry``). One conditional listing;
        then one read per log issue updated since the sweep's cutoff (a run's budget and
        lease, or back to the last complete sweep) that changed since this process last
        found nothing there. The state's ETag is the one the next sweep may ask with:
        None while anything may change with time alone (a run in flight, a follow-up
        waiting for a limit, a failure). A failure holds up no dispatch."""
        settings = self.settings
        began = self._github_now()
        try:
            listing = carry.recently_updated(self.bot, settings, etag=state.sweep_etag)
        except TuskError as error:
            report.errors.append(f"looking for late follow-ups failed: {error}")
            return replace(state, sweep_etag=None)
        if listing.unchanged:  # nothing changed since a sweep that read everything
            return replace(state, swept_since=carry.next_mark(settings, began, state.swept_since))
        since = carry.cutoff(settings, began, swept_since=state.swept_since)
        items, settled, complete = listing.items, True, True
        if carry.reaches_past_page(items, since):
            try:
                items = carry.updated_since(self.bot, settings, since)
            except TuskError as error:
                report.errors.append(f"looking for late follow-ups failed: {error}")
                complete = False
        for item in items:
            if not carry.updated_after(item, since):
                continue
            thread = carry.finished_thread(item, settings, began)
            number = int(item["number"])
            if thread is None:
                settled = settled and item.get("state") == "closed"  # open: in flight
                continue
            if self._swept.get(number) == item.get("updated_at"):
                continue
            try:
                comments = followups.read(self.bot, settings.control_repo, number)
                for followup in carry.to_carry(comments, bot=settings.bot):
                    settled = self._carry(number, thread, followup, comments, report) and settled
            except (TuskError, LookupError, ValidationError) as error:
                report.errors.append(f"carrying follow-ups of log issue #{number}: {error}")
                settled = complete = False
            else:
                self._swept[number] = item.get("updated_at")  # a courtesy for --loop
        return replace(
            state,
            sweep_etag=listing.etag if settled and complete else None,
            swept_since=carry.next_mark(settings, began, state.swept_since)
            if complete
            else state.swept_since,
        )

    def _carry(
        self,
        log_issue: int,
        thread: tuple[str, int],
        followup: followups.Followup,
        comments: list[dict[str, Any]],
        report: CycleReport,
    ) -> bool:
        """One late follow-up: read back from its thread, planned as a trigger is, past the
        limits across runs as a fresh mention is, sent as the job its node names, then said
        ``carried``; or said ``refused`` when it may not start a run (its author is no
        longer allowed, it is gone, a limit drops it). Over a limit that waits, it stays
        on the log issue, kept in the sweep's window by a ``waiting`` record. True when it
        is settled (carried or refused), False when it waits."""
        repo, number = thread
        kind, identifier = carry.node_parts(followup.node)
        ref = context.ThreadRef(repo=repo, kind=carry.thread_kind(followup.url), number=number)
        try:
            fetched = self._fetch_context(self.bot, ref, self.settings.bot)
        except context.ThreadGone as gone:
            self._refuse(log_issue, followup, f"its thread is gone ({gone})", report)
            return True
        node = next(
            (n for n in nodes_of(fetched.raw) if n.type == kind and n.id == identifier), None
        )
        work = self._plan_carried(node, repo, fetched.raw) if node else None
        if not isinstance(work, TaskWork):
            why = work.reason if isinstance(work, Skipped) else "the mention is gone"
            self._refuse(log_issue, followup, why, report)
            return True
        work = work.model_copy(update={"jobid": carry.carried_job_id(repo, followup.node)})
        if work.jobid not in self._sent:
            if (over := self._limits.check(work)) is not None:
                self._over_limit(log_issue, followup, work, over, fetched.raw, comments, report)
                return self.settings.limits.over_limit == "drop"
            dispatch_task(self.dispatcher, self.settings, work, fetched.raw)
            self._limits.dispatched(work)
            self._sent.add(work.jobid)
        if (key := followups.thread_key(repo, number)) is not None:
            self._dispatched_threads.add(key)  # a mention there now waits for this run
        carry.note_carried(
            self.bot,
            self.settings,
            log_issue=log_issue,
            thread=thread,
            followup=followup,
            jobid=work.jobid,
        )
        report.carried.append(f"{followup.url} → {work.jobid}")
        return True

    def _over_limit(
        self,
        log_issue: int,
        followup: followups.Followup,
        work: TaskWork,
        over: Refusal,
        raw: RawContext,
        comments: list[dict[str, Any]],
        report: CycleReport,
    ) -> None:
        """A carried follow-up over a limit, as a fresh mention: the thread is answered once;
        dropped, it is said ``refused``; waiting, it stays to carry, and a ``waiting`` record
        now and then keeps its log issue in the sweep's window until the limit allows it."""
        report.over_limit.append(answer(self.bot, self.settings, work, over, raw))
        if self.settings.limits.over_limit == "drop":
            self._refuse(log_issue, followup, f"over a limit ({over.sentence()})", report)
            return
        now = self._github_now()
        if carry.needs_waiting_record(comments, followup, self.settings, now):
            carry.say_outcome(
                self.bot,
                self.settings,
                log_issue=log_issue,
                followup=followup,
                how=carry.WAITING,
                note=f"⏳ Follow-up {followup.url} waits for a limit: {over.sentence()}",
            )

    def _plan_carried(self, node: Node, repo: str, raw: RawContext) -> TaskWork | Skipped | None:
        """The follow-up's mention as a trigger: the same rules, its own marker."""
        if node.author.lower() == self.settings.bot.lower():
            return Skipped(node, "the bot's own text")
        candidate = Candidate(node, "task")
        trust = TrustDecision("external", "none", "not asked: the author may not start work")
        if needs_trust_level(candidate, self.settings):
            trust = fetch_trust(
                self.bot, repo=repo, login=node.author, association=node.author_association
            )
        work = plan(
            candidate,
            repo=repo,
            trust=trust,
            settings=self.settings,
            blocklist=self._blocklist_of_cycle(),
            now=self._clock(),
            raw=raw,
        )
        return work if isinstance(work, TaskWork | Skipped) else None

    def _refuse(
        self, log_issue: int, followup: followups.Followup, why: str, report: CycleReport
    ) -> None:
        carry.say_outcome(
            self.bot,
            self.settings,
            log_issue=log_issue,
            followup=followup,
            how=carry.REFUSED,
            note=f"🚫 Follow-up {followup.url} came after the run ended and is not carried "
            f"over: {why}.",
        )
        report.skipped.append(f"{followup.url}: not carried over: {why}")

    def _follow_up(self, holder: RunInFlight, work: TaskWork, report: CycleReport) -> None:
        """A task mention on a thread whose run is in flight is that run's follow-up:
        recorded on its log issue (once per node), then 👀, then marked read (C1)."""
        trigger = work.trigger
        followup = followups.Followup(
            node=followups.node_key(trigger.type, trigger.id),
            url=trigger.url,
            author=work.actor,
            trust_level=work.trust_level,
            trust_source=work.trust_source,
            text=trigger.body,
            permissions=work.permission_config.model_dump(mode="json"),
        )
        followups.record(
            self.bot,
            control_repo=self.settings.control_repo,
            log_issue=holder.number,
            followup=followup,
            bot=self.settings.bot,
        )
        self._sent.add(work.jobid)
        report.followups.append(f"{trigger.url} → log issue #{holder.number}")
        self._to_acknowledge.append((work.repo, trigger))
