"""Whether an approval command may act, and on which set (pure).

Fail closed: only a comment GitHub shows as written by the requester, never
edited since, holding the verb now, from an allowed user with write access to
the target repository, naming a set that waits (digest given, or the one set
pending on the thread), not expired, discarded or applied, may act. Anything
else is a refusal with its reason, said on the thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from tusk.approval.staged_set import normal_digest
from tusk.text.commands import ApprovalCommand

WRITE_ROLES = frozenset({"admin", "maintain", "write"})
SetState = Literal["waiting", "applied", "discarded", "failed"]


@dataclass(frozen=True)
class Comment:
    """The approval comment as GitHub shows it now."""

    author: str
    command: ApprovalCommand | None
    edited: bool


@dataclass(frozen=True)
class Pending:
    """A set the bot previewed on the thread, and what became of it."""

    digest: str
    state: SetState = "waiting"
    expires_at: datetime | None = None


@dataclass(frozen=True)
class Verdict:
    act: Literal["apply", "discard", "refuse"]
    digest: str = ""
    reason: str = ""


def refuse(reason: str) -> Verdict:
    return Verdict("refuse", reason=reason)


def who_may(author: str, *, allowed: Sequence[str], role: str | None) -> str | None:
    """Why ``author`` may not approve, or None when they may."""
    if author.lower() not in {login.lower() for login in allowed}:
        return f"{author} is not one of the users allowed to approve (agent.approvers)"
    if role not in WRITE_ROLES:
        return f"{author} has no write access to the repository (GitHub says: {role or 'none'})"
    return None


def decide(
    comment: Comment,
    *,
    actor: str,
    allowed: Sequence[str],
    role: str | None,
    pending: Sequence[Pending],
    now: datetime,
) -> Verdict:
    """What the approval comment may do, from what GitHub shows."""
    if comment.author.lower() != actor.lower():
        return refuse(f"the comment is by {comment.author}, not {actor}")
    if comment.edited:
        return refuse("the comment was edited after it was posted; post a new one to approve")
    command = comment.command
    if command is None:
        return refuse("the comment no longer says `apply` or `discard` to the bot")
    why_not = who_may(comment.author, allowed=allowed, role=role)
    if why_not is not None:
        return refuse(why_not)
    target = _target(command, pending)
    if isinstance(target, Verdict):
        return target
    if target.state != "waiting":
        return refuse(f"the set {target.digest} was already {target.state}; it cannot be applied")
    if command.verb == "discard":
        return Verdict("discard", target.digest)
    if target.expires_at is not None and now >= target.expires_at:
        return refuse(
            f"the set {target.digest} expired on {target.expires_at:%Y-%m-%d %H:%M} UTC; "
            "ask the bot again to have the work redone"
        )
    return Verdict("apply", target.digest)


def _target(command: ApprovalCommand, pending: Sequence[Pending]) -> Pending | Verdict:
    if command.digest is not None:
        digest = normal_digest(command.digest)
        found = [p for p in pending if p.digest == digest]
        if not found:
            return refuse(f"no staged set with digest {digest} waits on this thread")
        return found[0]
    waiting = [p for p in pending if p.state == "waiting"]
    if len(waiting) == 1:
        return waiting[0]
    if not waiting:
        return refuse("no staged set waits on this thread")
    return refuse(f"{len(waiting)} staged sets wait on this thread: name the digest to apply")
