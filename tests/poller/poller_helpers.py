"""Helpers for poller tests against the local GitHub: scenarios, a poller, decoded dispatches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import (
    ApprovalRequest,
    ContextDocument,
    GoAwayRequest,
    StopRequest,
    UndoRequest,
)
from tusk.github.gateway import Gateway, RequestLedger
from tusk.issues.state import StateStore
from tusk.poller.cycle import Poller
from tusk.shards import codec as shards
from tusk.text.markers import parse_markers, render_marker

BOT = "tusk-bot"
REPO = "alice/widgets"
CONTROL = "alice/control"
SETTINGS = Settings(bot=BOT, control_repo=CONTROL, allowed_users=("alice", "bob"))


def scenario(
    *,
    issues: list[dict[str, Any]] | None = None,
    pulls: list[dict[str, Any]] | None = None,
    discussions: list[dict[str, Any]] | None = None,
    now: str = "2026-01-01T00:00:00Z",
) -> dict[str, Any]:
    """alice owns widgets, bob may write to it, mallory is a stranger, renovate[bot] a Bot."""
    widgets: dict[str, Any] = {
        "name": REPO,
        "description": "Widgets for everyone",
        "default_branch": "main",
        "collaborators": {"bob": "write", BOT: "write"},
        "branches": [{"name": "main"}],
        "files": {"README.md": "# Widgets\n"},
        "issues": issues or [],
    }
    if pulls:
        widgets["pulls"] = pulls
    if discussions:
        widgets["discussions"] = discussions
        widgets["has_discussions"] = True
    return {
        "now": now,
        "users": [
            {"login": "alice"},
            {"login": "bob"},
            {"login": "mallory"},
            {"login": BOT},
            {"login": "renovate[bot]", "type": "Bot"},
        ],
        "tokens": {
            "bot-read": {"user": BOT, "scopes": ["notifications", "repo"], "read_only": True},
            "dispatch": {"user": "alice", "scopes": ["repo"]},
            "agent": {"user": BOT, "scopes": ["repo"]},
            "alice": {"user": "alice", "scopes": ["repo"]},
            "mallory": {"user": "mallory", "scopes": ["repo"]},
        },
        "repos": [
            widgets,
            {
                "name": CONTROL,
                "private": True,
                "collaborators": {BOT: "write"},
                "labels": ["workflow", "bug"],
            },
        ],
    }


def issue(
    number: int, comments: list[dict[str, Any]], *, body: str = "Something is off.", **extra: Any
) -> dict[str, Any]:
    return {
        "number": number,
        "author": "alice",
        "title": f"Issue {number}",
        "body": body,
        "comments": comments,
        **extra,
    }


def said(author: str, body: str) -> dict[str, Any]:
    return {"author": author, "body": body}


@dataclass
class Sent:
    """What the poller dispatched, decoded."""

    tasks: list[ContextDocument] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # job id of each shard 0 sent, in order
    go_aways: list[GoAwayRequest] = field(default_factory=list)
    approvals: list[ApprovalRequest] = field(default_factory=list)
    undos: list[UndoRequest] = field(default_factory=list)
    stops: list[StopRequest] = field(default_factory=list)
    shard_counts: dict[str, int] = field(default_factory=dict)

    @property
    def jobids(self) -> list[str]:
        return [doc.jobid for doc in self.tasks]


def decode_dispatches(dispatches: list[dict[str, Any]]) -> Sent:
    sent = Sent()
    by_job: dict[tuple[str, str], list[shards.Shard]] = {}
    for item in dispatches:
        assert item["repo"].lower() == CONTROL
        payload = item["client_payload"]
        if item["event_type"] == "tusk-go-away":
            sent.go_aways.append(GoAwayRequest.model_validate(payload))
        elif item["event_type"] == "tusk-approval":
            sent.approvals.append(ApprovalRequest.model_validate(payload))
        elif item["event_type"] == "tusk-undo":
            sent.undos.append(UndoRequest.model_validate(payload))
        elif item["event_type"] == "tusk-stop":
            sent.stops.append(StopRequest.model_validate(payload))
        else:
            assert item["event_type"] == "tusk-shard"
            shard = shards.parse_shard(payload)
            by_job.setdefault((shard.jobid, shard.checksum), []).append(shard)
            if shard.shard_index == 0:
                sent.order.append(shard.jobid)
    for (jobid, _), parts in by_job.items():
        sent.shard_counts[jobid] = len(parts)
        doc = ContextDocument.model_validate_json(shards.join_shards(parts))
        sent.tasks.append(doc)
    return sent


@dataclass
class Harness:
    github: Any
    settings: Settings
    ledger: RequestLedger
    poller: Poller

    def sent(self) -> Sent:
        return decode_dispatches(self.github.dispatches())

    def threads(self) -> list[dict[str, Any]]:
        gateway = self.github.gateway("bot-read")
        return list(gateway.paginate("/notifications", params={"all": "true"}, per_page=50))


def make_poller(
    github: Any, settings: Settings = SETTINGS, *, bot: Gateway | None = None, **kwargs: Any
) -> Harness:
    ledger = RequestLedger()
    bot = bot or github.gateway("bot-read", ledger=ledger)
    dispatcher = github.gateway("dispatch")
    store = StateStore(bot, settings)
    poller = Poller(
        settings=settings,
        bot=bot,
        dispatcher=dispatcher,
        read_blocklist=store.read_blocklist,
        **kwargs,
    )
    return Harness(github, settings, bot.ledger, poller)


def wire(doc: ContextDocument) -> dict[str, Any]:
    """The document's raw context as it travels in the shards (JSON)."""
    return doc.raw.model_dump(mode="json")


def claim(github: Any, doc: ContextDocument) -> None:
    """What build-context does for a dispatched task: the run's log issue, open, holding
    its thread (``tusk.issues.thread_runs``)."""
    data = {
        "jobid": doc.jobid,
        "repo": doc.repo,
        "requester": doc.actor,
        "thread": f"{doc.repo}#{doc.trigger.number}",
    }
    github.gateway("agent").post(
        f"/repos/{CONTROL}/issues",
        json={
            "title": f"[Agent Log] {doc.repo} #{doc.trigger.number}",
            "body": render_marker("job", data),
            "labels": ["workflow"],
        },
    )


@dataclass
class Settled:
    """Every mention of a poll's threads: the tasks sent, the follow-ups recorded."""

    tasks: list[ContextDocument]
    followups: list[dict[str, Any]]
    reports: list[Any]


def settle(h: Harness, cycles: int = 4) -> Settled:
    """Poll until no thread is left unread, each dispatched task claimed between polls as
    its build-context would: one run per thread, later mentions its follow-ups (C1)."""
    from tusk.poller.core import PollState

    reports, claimed = [], set()
    for _ in range(cycles):
        _, report = h.poller.cycle(PollState())
        reports.append(report)
        for doc in h.sent().tasks:
            if doc.jobid not in claimed:
                claimed.add(doc.jobid)
                claim(h.github, doc)
        if not report.left_unread:
            break
    return Settled(h.sent().tasks, recorded_followups(h.github), reports)


def recorded_followups(github: Any) -> list[dict[str, Any]]:
    """The follow-up records the bot left on the control repository's log issues."""
    gateway = github.gateway("agent")
    found = []
    for item in gateway.paginate(f"/repos/{CONTROL}/issues", params={"state": "all"}):
        for comment in gateway.paginate(f"/repos/{CONTROL}/issues/{item['number']}/comments"):
            if comment["user"]["login"] == BOT:
                found += parse_markers(comment["body"], "followup")
    return found
