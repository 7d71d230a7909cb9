"""The poller's decisions, free of I/O (ENGINEERING: a sans-I/O poller).

``poll(state, response)`` turns a notifications response into the next
state and the threads to look at. ``locate_triggers`` finds, in a thread's
fetched context, every node changed since the thread was last read that
@mentions the bot (MISSION P2) and says whether it asks for work or for the
bot to go away (P5). ``plan`` turns one trigger into work, or a reason to
skip it (P3, P4, P8). The edge in ``cycle`` does the fetching and sending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from tusk.contracts.commands import APPROVAL, GO_AWAY, CommandJob, job_of_kind, job_of_verb
from tusk.contracts.config import Settings
from tusk.contracts.models import (
    ApprovalRequest,
    Blocklist,
    CommandRequest,
    TaskWork,
    Trigger,
    TriggerType,
)
from tusk.contracts.raw_context import Authored, RawContext, ThreadKind
from tusk.github.trust import TrustDecision
from tusk.poller.authorization import is_allowed
from tusk.poller.jobids import job_id
from tusk.poller.permissions import effective_permissions
from tusk.text.commands import approval_command, parse_command, with_phrases
from tusk.text.markers import parse_markers
from tusk.text.mentions import Author, author_may_trigger, mentions_bot

DEFAULT_POLL_INTERVAL = 60.0
# The bot's reactions that say a node was dispatched: the poller's 👀 on every trigger it
# sent (task or go-away), the run's 🚀 or 😕 when it ended.
DISPATCHED_MARKS = frozenset({"eyes", "rocket", "confused"})
SUBJECT_KINDS: dict[str, ThreadKind] = {
    "Issue": "issue",
    "PullRequest": "pull_request",
    "Discussion": "discussion",
}


def parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- notifications


@dataclass(frozen=True)
class NotificationsResponse:
    status: int
    threads: tuple[dict[str, Any], ...]
    last_modified: str | None
    poll_interval: float | None
    # The earliest second in which GitHub can have built the listing (its Date header
    # less the round trip: ``notifications.listing_second``).
    listed_at: datetime | None = None


@dataclass(frozen=True)
class PollState:
    """What ``--loop`` carries from one poll to the next (in memory only)."""

    last_modified: str | None = None
    poll_interval: float = DEFAULT_POLL_INTERVAL
    # The ETag of the last sweep for late follow-ups that left nothing pending: an idle
    # sweep is then one conditional request answered 304 (``tusk.poller.carry``).
    sweep_etag: str | None = None
    # GitHub's time when the last complete sweep began: every log issue updated before it
    # was read. A poller that was down longer than a run's budget and lease looks back to
    # here, not only over the window (kept with ``--state``, so across scheduled runs).
    swept_since: str | None = None


@dataclass(frozen=True)
class Thread:
    id: str
    repo: str
    subject_type: str
    title: str
    number: int | None
    reason: str
    updated_at: datetime
    last_read_at: datetime | None

    @property
    def kind(self) -> ThreadKind | None:
        return SUBJECT_KINDS.get(self.subject_type)


def parse_thread(item: dict[str, Any]) -> Thread:
    subject = item.get("subject") or {}
    url = subject.get("url") or ""
    match = re.search(r"/(?:issues|pulls|discussions)/([0-9]+)$", url)
    return Thread(
        id=str(item["id"]),
        repo=str((item.get("repository") or {}).get("full_name", "")),
        subject_type=str(subject.get("type", "")),
        title=str(subject.get("title", "")),
        number=int(match.group(1)) if match else None,
        reason=str(item.get("reason", "")),
        updated_at=parse_time(item.get("updated_at")) or datetime.now(UTC),
        last_read_at=parse_time(item.get("last_read_at")),
    )


def poll(state: PollState, response: NotificationsResponse) -> tuple[PollState, list[Thread]]:
    """The next state and the unread threads to examine. A 304 means no work."""
    interval = response.poll_interval or state.poll_interval
    if response.status == 304:
        return replace(state, poll_interval=interval), []
    threads = [parse_thread(item) for item in response.threads]
    # The sweep's marks stay: they are about the log issues, not the notifications.
    return replace(state, last_modified=response.last_modified, poll_interval=interval), threads


# --------------------------------------------------------------------------- triage

# Reasons that say the bot was not @mentioned in the thread since it last read it.
# GitHub: "if you are the author of an issue, subsequent notifications on that
# issue will have a reason of author. If you're then @mentioned on the same issue,
# the notifications you fetch thereafter will have a reason of mention. The reason
# remains as mention, regardless of whether you're ever mentioned again."
# (REST docs, "Notification reasons"). A mention replaces these, so a thread that
# still shows one holds no mention of the bot. Every other reason (mention,
# team_mention, assign, review_requested, state_change, any new one) may hide a
# mention and is looked at.
NO_MENTION_REASONS = frozenset({"author", "comment", "subscribed", "manual"})

Look = Literal["done", "probe", "fetch"]


@dataclass(frozen=True)
class Triage:
    """What one unread thread needs before it may be marked read.

    ``done``: nothing (``why`` says so); ``probe``: a look at its activity since
    ``last_read_at`` (issues and pull requests read before, whose sticky
    ``mention`` reason may be old) before any full context; ``fetch``: the full
    context at once."""

    look: Look
    why: str = ""


def triage(thread: Thread, blocklist: Blocklist) -> Triage:
    """Decide from the notification alone, at no cost, how much a thread needs."""
    if thread.kind is None:
        return Triage("done", f"{thread.repo}: {thread.subject_type} notifications carry no task")
    if blocklist.blocks(thread.repo):
        return Triage("done", f"{thread.repo} is on the blocklist")
    if thread.reason in NO_MENTION_REASONS:
        return Triage(
            "done",
            f"{thread.repo} {thread.title!r}: reason {thread.reason!r}, "
            "so no mention of the bot since it last read the thread",
        )
    if thread.last_read_at is not None and thread.kind != "discussion" and thread.number:
        return Triage("probe")
    return Triage("fetch")


def after_cycle(state: PollState, *, all_threads_done: bool) -> PollState:
    """A thread left unread (dispatch failed, changed meanwhile) must be seen again, but
    ``If-Modified-Since`` would hide it behind a 304: forget the date then."""
    return state if all_threads_done else replace(state, last_modified=None)


# --------------------------------------------------------------------------- triggers


@dataclass(frozen=True)
class Node:
    """A piece of text in a thread that may carry a trigger."""

    type: TriggerType
    id: str
    url: str
    author: str
    author_is_bot_account: bool
    body: str
    created_at: datetime
    updated_at: datetime | None
    number: int | None
    review_id: int | None = None
    # GitHub's author_association of this node (OWNER, COLLABORATOR, NONE, ...): the
    # trust level's fallback when the permission endpoint is not readable (tusk.github.trust).
    author_association: str | None = None
    # The reactions the bot left on it (raw ``viewer_reactions``): its 👀 says the node
    # was dispatched before, 🚀/😕 that its run ended (P8: never twice for one trigger).
    bot_reactions: frozenset[str] = frozenset()

    @property
    def dispatched_before(self) -> bool:
        return bool(self.bot_reactions & DISPATCHED_MARKS)

    def changed_since(self, moment: datetime | None) -> bool:
        if moment is None:
            return True
        latest = max(self.created_at, self.updated_at or self.created_at)
        return latest >= moment

    def as_trigger(self) -> Trigger:
        return Trigger(
            type=self.type,
            id=self.id,
            url=self.url,
            number=self.number,
            author=self.author,
            body=self.body,
            created_at=self.created_at,
            updated_at=self.updated_at,
            review_id=self.review_id,
        )


@dataclass(frozen=True)
class Candidate:
    node: Node
    kind: str  # "task", or the kind of a command job (``tusk.contracts.commands``)


@dataclass(frozen=True)
class Skipped:
    node: Node | None
    reason: str


def nodes_of(raw: RawContext) -> list[Node]:
    """Every node of a fetched thread that could carry a mention, oldest first."""
    thread, number = raw.thread, raw.thread.number
    discussion = raw.kind == "discussion"
    body_types: dict[str, TriggerType] = {
        "issue": "issue_body",
        "pull_request": "pull_request_body",
        "discussion": "discussion_body",
    }
    body_id = str(thread.node_id if discussion else number)
    # A thread's updated_at moves with every comment, label or push; only an edit of
    # the body itself may make the body a new trigger (P8: never twice for one trigger).
    body_type = body_types[raw.kind]
    nodes = [_node(thread, body_type, number, body_id, thread.created_at, thread.last_edited_at)]
    comment_type: TriggerType = "discussion_comment" if discussion else "issue_comment"
    for item in raw.comments:
        item_id = str(item.node_id if discussion else item.id)
        nodes.append(_node(item, comment_type, number, item_id, item.created_at, item.updated_at))
    for review in raw.reviews:
        if review.body:
            review_id, when = str(review.id), review.submitted_at
            nodes.append(_node(review, "review", number, review_id, when, review.updated_at))
    for note in raw.review_comments:
        nodes.append(
            _node(
                note,
                "review_comment",
                number,
                str(note.id),
                note.created_at,
                note.updated_at,
                review_id=note.pull_request_review_id,
            )
        )
    nodes.sort(key=lambda node: (node.created_at, node.id))
    return nodes


def _node(
    item: Authored,
    type_: TriggerType,
    number: int | None,
    identifier: str,
    created: datetime | None,
    updated: datetime | None,
    *,
    review_id: int | None = None,
) -> Node:
    return Node(
        type=type_,
        id=identifier,
        url=item.html_url or "",
        author=item.author,
        author_is_bot_account=item.user is not None and item.user.type == "Bot",
        body=item.body,
        created_at=created or datetime.fromtimestamp(0, UTC),
        updated_at=updated,
        number=number,
        review_id=review_id,
        author_association=item.author_association,
        bot_reactions=frozenset(item.viewer_reactions),
    )


def locate_triggers(
    nodes: list[Node], *, since: datetime | None, settings: Settings
) -> tuple[list[Candidate], list[Skipped]]:
    """Every node changed since ``since`` that mentions the bot, in order (P2, P5).

    Returns the candidates and, for the log, mentions that were skipped and why.
    """
    candidates: list[Candidate] = []
    skipped: list[Skipped] = []
    for node in nodes:
        if not node.changed_since(since) or not mentions_bot(node.body, settings.bot):
            continue
        if node.author.lower() == settings.bot.lower():
            skipped.append(Skipped(node, "the bot's own text"))
            continue
        if node.dispatched_before:
            # A thread left unread (a failed neighbour, a mark answered 202 that lands
            # later, a mention in the listing's own second) is read whole again: the
            # bot's own reaction on GitHub, not this process's memory, says it was sent.
            skipped.append(Skipped(node, "dispatched before (the bot's 👀 is on it)"))
            continue
        # Anyone may give a command (G1: anyone may ask the bot to leave): no allowlist
        # or account type comes first; each command's step decides from GitHub who may.
        if (job := command_job(node.body, settings)) is not None:
            candidates.append(Candidate(node, job.kind))
            continue
        author = Author(node.author, node.author_is_bot_account)
        if not author_may_trigger(
            author, bot=settings.bot, allow_bot_accounts=settings.allow_bot_accounts
        ):
            reason = f"{node.author} is a Bot account (allow_bot_accounts is off)"
            skipped.append(Skipped(node, reason))
            continue
        if approval_command(node.body, bot=settings.bot) is not None:
            candidates.append(Candidate(node, APPROVAL.kind))
            continue
        candidates.append(Candidate(node, "task"))
    return candidates, skipped


# --------------------------------------------------------------------------- work


def command_job(body: str | None, settings: Settings) -> CommandJob[Any] | None:
    """The command job ``body`` asks for in the bot-command grammar, or None."""
    verbs = with_phrases({"go_away": settings.go_away.phrase})
    command = parse_command(body, bot=settings.bot, verbs=verbs)
    return job_of_verb(command.verb) if command is not None else None


@dataclass(frozen=True)
class CommandWork:
    """A command to send on as its job's one dispatch (never a task)."""

    job: CommandJob[Any]
    request: CommandRequest


Work = TaskWork | CommandWork


def pending_previews(raw: RawContext, *, bot: str) -> list[dict[str, Any]]:
    """The bot's previews of staged sets on a fetched thread (``tusk:preview`` markers)."""
    found = []
    for item in raw.comments:
        if item.user is not None and item.user.login.lower() == bot.lower():
            found += parse_markers(item.body, "preview")
    return found


def plan_approval(
    node: Node, *, repo: str, settings: Settings, now: datetime, raw: RawContext | None = None
) -> CommandWork | Skipped:
    """``@bot apply`` / ``@bot discard``: never a task. Who may approve is decided by the
    apply job from GitHub itself (and said on the thread); the poller only sends it on,
    where a preview of the bot's waits (``raw``: the thread as fetched)."""
    command = approval_command(node.body, bot=settings.bot)
    if command is None or node.type != "issue_comment" or node.number is None:
        return Skipped(node, "approval is answered in a comment on the issue or pull request")
    if raw is not None and not pending_previews(raw, bot=settings.bot):
        return Skipped(node, "no staged set waits for approval on this thread")
    return CommandWork(
        APPROVAL,
        ApprovalRequest(
            jobid=job_id(repo, node.type, node.id),
            verb=command.verb,
            digest=command.digest,
            actor=node.author,
            repo=repo,
            number=node.number,
            comment_id=node.id,
            comment_url=node.url,
            timestamp=now,
        ),
    )


def command_request(
    node: Node, *, jobid: str, repo: str, trust: TrustDecision, now: datetime
) -> dict[str, Any]:
    """What a command's request says of its comment: who asked, where, how trusted, and
    when; each step reads the comment back from GitHub before acting."""
    return {
        "jobid": jobid,
        "actor": node.author,
        "repo": repo,
        "trust_level": trust.level,
        "trust_source": trust.source,
        "comment_id": node.id,
        "comment_url": node.url,
        "comment_type": node.type,
        "timestamp": now,
    }


def plan(
    candidate: Candidate,
    *,
    repo: str,
    trust: TrustDecision,
    settings: Settings,
    blocklist: Blocklist,
    now: datetime,
    raw: RawContext | None = None,
) -> Work | Skipped:
    """One trigger → the work to dispatch, or why not (P3, P4, P5, P8). ``raw``, the
    thread as fetched, lets an approval wait only where a preview does."""
    node = candidate.node
    jobid = job_id(repo, node.type, node.id)
    if candidate.kind == APPROVAL.kind:
        if blocklist.blocks(repo):
            return Skipped(
                node, f"{repo} is on the blocklist: nothing of the bot's is applied there"
            )
        return plan_approval(node, repo=repo, settings=settings, now=now, raw=raw)
    if candidate.kind == GO_AWAY.kind:
        # Anyone may ask the bot to leave; the go-away workflow decides the scope (G1).
        if blocklist.blocks_user(node.author) and (not trust.trusted or blocklist.blocks(repo)):
            return Skipped(node, f"{node.author}'s go-away is already in force")
    elif blocklist.blocks(repo):
        return Skipped(node, f"{repo} is on the blocklist")
    if (job := job_of_kind(candidate.kind)) is not None:  # a command, never a task
        request = command_request(node, jobid=jobid, repo=repo, trust=trust, now=now)
        return CommandWork(job, job.request(**request))
    if blocklist.blocks_user(node.author):
        return Skipped(node, f"{node.author} is on the blocklist")
    if not _allowed(node.author, settings):
        return Skipped(node, f"{node.author} is not in allowed_users")
    return TaskWork(
        jobid=jobid,
        repo=repo,
        actor=node.author,
        trust_level=trust.level,
        trust_source=trust.source,
        permission_config=effective_permissions(settings.default_permissions(), node.body),
        trigger=node.as_trigger(),
    )


def _allowed(login: str, settings: Settings) -> bool:
    return is_allowed(login, settings.allowed_users)


def needs_trust_level(candidate: Candidate, settings: Settings) -> bool:
    """Unauthorized task requests are skipped before any permission request is spent."""
    return candidate.kind == GO_AWAY.kind or (
        candidate.kind == "task" and _allowed(candidate.node.author, settings)
    )
