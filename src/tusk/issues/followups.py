"""Follow-ups: later mentions on a thread whose run is still in flight (MISSION C1).

The poller records each one as the bot's comment on the run's log issue,
carrying a ``followup`` marker with the mention's node (type and id), its
author, their trust, its text and its narrowed permissions, plus a nonce: a
create whose answer was lost is found again by its nonce, and a re-delivery
of the same mention (two pollers, a thread read again) is the same node, so
readers count it once. The run reads them back at each safe point of its
session and records each delivery under a ``followup-delivered`` marker.

Only the bot's own comments count: anyone who can comment on the log issue
can type a marker, and a follow-up forged there must never reach the agent.
Pure but for ``record`` and ``read``, which talk to GitHub.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tusk.github.gateway import Gateway
from tusk.github.once import new_nonce, post_marked_comment
from tusk.text.markers import parse_markers, render_marker

FOLLOWUP_TEXT_LIMIT = 20000  # a comment holds 65,536 characters; the rest is the record


def thread_key(repo: str, number: int | None) -> str | None:
    """One thread: an issue, pull request or discussion in one repository."""
    return f"{repo.lower()}#{number}" if number is not None else None


@dataclass(frozen=True)
class Followup:
    """One follow-up as the poller recorded it."""

    node: str  # "<trigger type>:<node id>": the mention's own identity
    url: str
    author: str
    trust_level: str
    trust_source: str
    text: str
    permissions: dict[str, Any]
    nonce: str = ""

    def marker_data(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "url": self.url,
            "author": self.author,
            "trust_level": self.trust_level,
            "trust_source": self.trust_source,
            "text": self.text[:FOLLOWUP_TEXT_LIMIT],
            "permissions": self.permissions,
            "nonce": self.nonce,
        }


def node_key(trigger_type: str, node_id: str) -> str:
    return f"{trigger_type}:{node_id}"


def _by_bot(comment: dict[str, Any], bot: str) -> bool:
    author = str((comment.get("user") or {}).get("login") or "")
    return author.lower() == bot.lower()


def _followup(data: dict[str, Any]) -> Followup | None:
    fields = ("node", "url", "author", "trust_level", "trust_source", "text")
    if not all(isinstance(data.get(name), str) for name in fields):
        return None
    permissions = data.get("permissions")
    return Followup(
        node=data["node"],
        url=data["url"],
        author=data["author"],
        trust_level=data["trust_level"],
        trust_source=data["trust_source"],
        text=data["text"],
        permissions=permissions if isinstance(permissions, dict) else {},
        nonce=str(data.get("nonce") or ""),
    )


def recorded(comments: Iterable[dict[str, Any]], *, bot: str) -> list[Followup]:
    """The follow-ups recorded on a log issue, oldest first, each node once; the bot's
    comments only."""
    found: dict[str, Followup] = {}
    for comment in comments:
        if not _by_bot(comment, bot):
            continue
        for data in parse_markers(comment.get("body"), "followup"):
            followup = _followup(data)
            if followup is not None and followup.node not in found:
                found[followup.node] = followup
    return list(found.values())


def delivered(comments: Iterable[dict[str, Any]], *, bot: str) -> dict[str, str]:
    """Each node the run already dealt with, and how (``delivered`` or ``carried``)."""
    done: dict[str, str] = {}
    for comment in comments:
        if not _by_bot(comment, bot):
            continue
        for data in parse_markers(comment.get("body"), "followup-delivered"):
            node, how = data.get("node"), data.get("how")
            if isinstance(node, str) and isinstance(how, str):
                done.setdefault(node, how)
    return done


def pending(comments: Sequence[dict[str, Any]], *, bot: str) -> list[Followup]:
    """Recorded follow-ups the run has not dealt with yet, oldest first."""
    done = delivered(comments, bot=bot)
    return [f for f in recorded(comments, bot=bot) if f.node not in done]


def record_body(followup: Followup) -> str:
    """The bot's comment that hands a follow-up to the run. No ``@``: quoting it here
    must not notify anyone. It opens with its marker: the poller's bot token writes
    nothing else on a log issue."""
    return (
        render_marker("followup", followup.marker_data())
        + f"\n📨 A follow-up from {followup.author} ({followup.trust_level}) on the thread: "
        f"{followup.url}\n\nIt goes to the running agent at its next safe point."
    )


def delivery_body(followup: Followup, how: str, note: str) -> str:
    return f"{note}\n\n" + render_marker(
        "followup-delivered", {"node": followup.node, "how": how, "url": followup.url}
    )


def read(gateway: Gateway, repo: str, number: int) -> list[dict[str, Any]]:
    return list(gateway.paginate(f"/repos/{repo}/issues/{number}/comments"))


def record(
    gateway: Gateway, *, control_repo: str, log_issue: int, followup: Followup, bot: str
) -> bool:
    """Record ``followup`` on the run's log issue unless it is there already; True when
    this call made the record. A lost answer is looked for by nonce before a resend."""
    if any(
        f.node == followup.node for f in recorded(read(gateway, control_repo, log_issue), bot=bot)
    ):
        return False
    nonce = new_nonce()
    mine = Followup(**{**followup.__dict__, "nonce": nonce})
    post_marked_comment(
        gateway,
        control_repo,
        log_issue,
        record_body(mine),
        kind="followup",
        nonce=nonce,
        bot=bot,
        what="the follow-up record",
    )
    return True


def note_delivery(
    gateway: Gateway,
    *,
    control_repo: str,
    log_issue: int,
    followup: Followup,
    how: str,
    note: str,
) -> None:
    """Say on the log issue what became of a follow-up. A repeat is harmless: readers take
    each node's first record."""
    path = f"/repos/{control_repo}/issues/{log_issue}/comments"
    gateway.post(path, json={"body": delivery_body(followup, how, note)})
